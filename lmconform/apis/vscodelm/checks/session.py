"""The session: what the bridge makes of the history each request carries (the provisional turn committed when the
client kept the answer, discarded when it edited it) and of a cancel.

Commit and discard show only in what the agent is given, so they are judged on an agent that says what it saw,
as `lmconform bridge --agent echo` does: `session 1 turn 2: 2 committed messages, previous turn committed; new
input: user: And now?`. With another agent they are UNSUPPORTED. A cancel is judged on the wire: no part after a
bound, and then, by profile, one complete and the result (`strict`) or nothing at all (`symposium`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from lmconform.apis.vscodelm import CANCEL
from lmconform.apis.vscodelm.checks.common import BridgeObserved, asked, cancel_time, responses
from lmconform.apis.vscodelm.checks.scope import (
    vscodelm_cancel,
    vscodelm_cancel_unknown,
    vscodelm_commit,
    vscodelm_discard,
)
from lmconform.apis.vscodelm.normalize import CANCEL_BOUND_S, Asked, normalize_vscodelm
from lmconform.cases import FIRST, StdioTurn
from lmconform.checks.refs import JSONRPC_NOTIFICATION, SYMPOSIUM_VSCODELM_HISTORY, SYMPOSIUM_VSCODELM_SESSION
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Requirement, Unsupported

ECHO_LINE = re.compile(r"session \d+ turn \d+: (\d+) committed messages, "
                       r"(new session|previous turn committed|previous turn discarded); new input: ")
COMMITTED, DISCARDED = "previous turn committed", "previous turn discarded"


def _item(observed: BridgeObserved, name: str) -> Asked:
    found = next((item for item in asked(observed) if item.name == name), None)
    if found is None:
        raise NotApplicable(f"the turn {name!r} was not sent: {observed.turns[name].skipped}")
    return found


def _own_messages(observed: BridgeObserved, name: str) -> int:
    """How many messages the turn `name` added to the history it carried (all of them, for the request)."""
    if name == FIRST:
        messages = observed.exchange.request.body.get("messages") if isinstance(observed.exchange.request.body, dict) \
            else None
        return len(messages) if isinstance(messages, list) else 0
    turn = next(turn for turn in observed.case.turns_of(StdioTurn) if turn.name == name)
    return len(turn.body.get("messages") or [])


def _history_judged(observed: BridgeObserved, turns: list[StdioTurn], expected_state: str) -> Iterator[Failure]:
    """Each of `turns` said what it was given: `expected_state`, with the committed history it should have."""
    judged = 0
    for turn in turns:
        item = _item(observed, turn.name)
        if not item.exchange.succeeded:
            continue  # the turn checks speak to an error
        said = normalize_vscodelm(item.exchange).text()
        found = ECHO_LINE.match(said)
        if found is None:
            raise Unsupported("the agent does not say which history it was given (the answer is not the "
                              "`session S turn T: N committed messages, …` line of `lmconform bridge --agent "
                              f"echo`): commit and discard cannot be told apart. It said: {said[:120]!r}")
        judged += 1
        sent = item.params.get("messages", []) if isinstance(item.params, dict) else []
        if expected_state == COMMITTED:
            committed = len(sent) - _own_messages(observed, turn.name)
        else:  # what was committed when the discarded turn began
            assert turn.previous is not None, "the case schema gives an edited answer the turn it replaces"
            previous = _item(observed, turn.previous)
            committed = len(previous.params.get("messages", [])) - _own_messages(observed, turn.previous)
        expected = f"{expected_state}, {committed} committed messages"
        actual = f"{found[2]}, {found[1]} committed messages"
        if expected != actual:
            yield Failure(expected, actual, said[:300])
    if not judged:
        raise NotApplicable("no turn of the history was answered")


@check("vscodelm.history.commit", level=Level.MUST, applies=vscodelm_commit, ref=SYMPOSIUM_VSCODELM_HISTORY,
       title="a history that carries the provisional turn and its answer as sent commits that turn",
       proven_by=("history-never-committed",))
def commit(observed: BridgeObserved) -> Iterator[Failure]:
    # Otherwise the agent loses the conversation: a stateful agent answers the next message without what came before.
    kept = [turn for turn in observed.case.turns_of(StdioTurn)
            if turn.previous and not turn.answers_call_of and turn.edited_answer is None]
    yield from _history_judged(observed, kept, COMMITTED)


@check("vscodelm.history.discard", level=Level.MUST, applies=vscodelm_discard, ref=SYMPOSIUM_VSCODELM_HISTORY,
       title="a history whose last answer the user edited discards the provisional turn and keeps the committed one",
       proven_by=("history-never-committed",))
def discard(observed: BridgeObserved) -> Iterator[Failure]:
    # The agent must answer the edited conversation: neither the answer the user replaced, nor a lost history.
    edited = [turn for turn in observed.case.turns_of(StdioTurn) if turn.edited_answer is not None]
    yield from _history_judged(observed, edited, DISCARDED)


def _cancelled(observed: BridgeObserved) -> list[tuple[Asked, float]]:
    """Each request the case cancelled while it was being answered, with when the cancel was written."""
    found = []
    for turn in observed.case.turns_of(StdioTurn):
        if not turn.cancels:
            continue
        sent = cancel_time(observed, turn.cancels)
        if sent is not None:
            found.append((_item(observed, turn.cancels), sent))
    if not found:
        raise NotApplicable("every cancelled request had been answered before its lm/cancel was written")
    return found


def _since(sent: float) -> str:
    return f"the lm/cancel written at {sent:.3f} s"


@check("vscodelm.cancel.no_more_parts", level=Level.MUST, applies=vscodelm_cancel, ref=SYMPOSIUM_VSCODELM_SESSION,
       title=f"after lm/cancel, no part of the request comes later than {CANCEL_BOUND_S:g} s",
       proven_by=("cancel-ignored",))
def no_more_parts(observed: BridgeObserved) -> Iterator[Failure]:
    # The user pressed stop: parts that keep coming are shown, and the agent keeps working (and costing).
    for item, sent in _cancelled(observed):
        late = [part for part in item.parts if part.at > sent + CANCEL_BOUND_S]
        if late:
            yield Failure(f"no part more than {CANCEL_BOUND_S:g} s after {_since(sent)}",
                          f"{len(late)} parts, the last {late[-1].at - sent:.2f} s after it", str(late[0]))


@check("vscodelm.cancel.strict_complete", level=Level.MUST, applies=vscodelm_cancel, ref=SYMPOSIUM_VSCODELM_SESSION,
       requires=[Requirement.BRIDGE_STRICT],
       title="a cancelled request still gets one lm/responseComplete, then its result (profile strict)",
       proven_by=("no-complete",))
def strict_complete(observed: BridgeObserved) -> Iterator[Failure]:
    # Profile strict: a client that waits for a request's end, as a JSON-RPC client waits for every response, is
    # never left waiting.
    for item, sent in _cancelled(observed):
        completes, response = item.completes, item.response
        if len(completes) != 1 or response is None or "result" not in response.value:
            answer = "no result" if response is None else item.exchange.status_text
            yield Failure(f"one lm/responseComplete, then the result, after {_since(sent)}",
                          f"{len(completes)} lm/responseComplete, {answer}",
                          str(response or (completes[-1] if completes else "")))


@check("vscodelm.cancel.symposium_silent", level=Level.SHOULD, applies=vscodelm_cancel, ref=SYMPOSIUM_VSCODELM_SESSION,
       requires=[Requirement.BRIDGE_SYMPOSIUM],
       title="a cancelled request gets neither a complete nor a result (profile symposium)",
       proven_by=("cancel-ignored",))
def symposium_silent(observed: BridgeObserved) -> Iterator[Failure]:
    # Profile symposium, as its source does: it drops the request's responder on cancel. SHOULD: a client that
    # has forgotten the request ignores what still comes for it.
    for item, sent in _cancelled(observed):
        late = [message for message in (*item.completes, *item.responses) if message.at >= sent]
        if late:
            yield Failure(f"nothing more after {_since(sent)}",
                          f"{len(late)} message(s): {', '.join(sorted({_kind(m.value) for m in late}))}", str(late[0]))


def _kind(value: dict) -> str:
    return "lm/responseComplete" if "method" in value else "the result" if "result" in value else "an error"


@check("vscodelm.cancel.unknown_id_ignored", level=Level.MUST, applies=vscodelm_cancel_unknown,
       ref=JSONRPC_NOTIFICATION, title="a cancel of a request that is not being answered gets no reply, and the "
                                      "bridge answers the next request", proven_by=("cancel-unknown-answered",))
def unknown_id_ignored(observed: BridgeObserved) -> Iterator[Failure]:
    # A notification is never answered (JSON-RPC), and VS Code cancels requests that have just finished all the
    # time: a bridge must take it in its stride.
    items = asked(observed)
    for position, item in enumerate(items):
        if item.method != CANCEL or item.is_request:
            continue
        later = items[position + 1:]
        until = next((other.response.at for other in later if other.is_request and other.response), float("inf"))
        stray = [message for message in responses(observed)
                 if item.sent_at <= message.at <= until and not any(message in other.responses for other in later)]
        for message in stray:
            yield Failure(f"no reply to the lm/cancel of {json.dumps((item.params or {}).get('requestId'))}",
                          "a response", str(message))
        following = next((other for other in later if other.is_request), None)
        if following is not None and not following.exchange.succeeded:
            yield Failure(f"a result for the next request ({following.method})", following.exchange.status_text,
                          str(following.response or ""))
