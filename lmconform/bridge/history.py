"""Sessions: how a stateless client's full history becomes a stateful agent's new input.

VS Code sends the whole conversation with every request. Per session the bridge keeps the *committed* history
(what the client has confirmed) and the *provisional* turn it is answering: that request's new input plus the
parts sent so far as one assistant message. A new request must start with the committed history; if what follows
starts with the provisional turn, the client kept the answer, so the turn is committed and the remainder is the
new input; otherwise the client edited or rejected it, so the provisional turn is discarded and everything after
the committed history is the new input. A history that matches no session starts a new one. Messages arrive with
adjacent text parts merged (lmconform.bridge.params), and recorded parts are merged the same way, so comparing
is plain equality.

Note that a session whose committed history is empty matches every history: a brand-new conversation sent while
one session has only a provisional turn discards that turn rather than starting a session. The source behaves
the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lmconform.bridge.params import merge_text

Message = dict[str, Any]

NEW_SESSION, COMMITTED, DISCARDED = "none", "committed", "discarded"  # what became of the previous turn


@dataclass(eq=False)
class Session:
    number: int  # 1, 2, …: in the order sessions were started, so an echoed answer can name them
    agent: dict[str, Any]
    committed: list[Message] = field(default_factory=list)
    provisional: list[Message] = field(default_factory=list)
    turns: int = 0
    streaming: Any = None  # the dispatcher's turn still answering in this session, if any

    def match(self, messages: list[Message]) -> tuple[list[Message], bool] | None:
        """(the new input, whether the provisional turn is discarded), or None when the history does not start
        with this session's committed history."""
        committed = len(self.committed)
        if messages[:committed] != self.committed:
            return None
        after = messages[committed:]
        if after[:len(self.provisional)] == self.provisional:
            return after[len(self.provisional):], False
        return after, True

    def record(self, part: dict[str, Any]) -> None:
        """A part sent to the client becomes part of the provisional turn's assistant message."""
        last = self.provisional[-1] if self.provisional else None
        if last is not None and last["role"] == "assistant":
            last["content"] = merge_text([*last["content"], part])
        else:
            self.provisional.append({"role": "assistant", "content": [part]})


@dataclass(frozen=True)
class Arrival:
    """A request as its session sees it: what the agent is given for this turn."""

    session: Session
    turn: int  # this session's 1st, 2nd, … request
    committed: tuple[Message, ...]  # the committed history, as it stands for this turn
    previous: str  # what became of the previous turn: NEW_SESSION, COMMITTED or DISCARDED
    new_input: tuple[Message, ...]

    @property
    def conversation(self) -> list[Message]:
        """What a stateless model must be sent to answer as the agent would: committed history, then new input."""
        return [*self.committed, *self.new_input]


class Sessions:
    def __init__(self, faults: frozenset[str]) -> None:
        self._sessions: list[Session] = []
        self._faults = faults

    def accept(self, agent: dict[str, Any], messages: list[Message]) -> Arrival:
        """Match the history to a session (one that keeps the provisional turn first, as the source prefers),
        commit or discard its provisional turn, and make the new input the next provisional turn."""
        matches = [(session, found) for session in self._sessions if session.agent == agent
                   for found in [session.match(messages)] if found is not None]
        kept = [(session, found) for session, found in matches if not found[1]]
        best = (kept or matches)[0] if kept or matches else None
        if best is None:
            session = Session(len(self._sessions) + 1, agent)
            self._sessions.append(session)
            new_input, previous = list(messages), NEW_SESSION
        else:
            session, (new_input, discarded) = best
            previous = DISCARDED if discarded else COMMITTED
            if not discarded and "history-never-committed" not in self._faults:
                session.committed.extend(session.provisional)
        session.provisional = [json.loads(json.dumps(item)) for item in new_input]  # recording must not alias
        session.turns += 1
        return Arrival(session, session.turns, tuple(session.committed), previous, tuple(new_input))


def render(messages: tuple[Message, ...] | list[Message]) -> str:
    """Messages as one line of text: `user: Hello | assistant: Hi [tool_call get_weather call-1 {"city":"Paris"}]`."""
    return " | ".join(f"{item['role']}: {''.join(_render_part(part) for part in item['content'])}"
                      for item in messages)


def _render_part(part: dict[str, Any]) -> str:
    if part["type"] == "text":
        return part["value"]
    if part["type"] == "tool_call":
        return f"[tool_call {part['toolName']} {part['toolCallId']} {_compact(part['parameters'])}]"
    return f"[tool_result {part['toolCallId']} {_compact(part['result'])}]"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
