"""Events written as an event stream the ways a form asks, every way one the WHATWG algorithm reads as the same
events: fields with or without the space after the colon, `event:`, `id:` and `retry:` fields, data over several
`data:` lines, comment lines inside and between events, keep-alive blocks and blank lines that dispatch nothing,
and LF, CRLF or CR line ends.

Some of these trip real clients. Where one does, the framing says so (a `Trouble`): the project's tests hold the
clients' verdicts to it, so that what is said here is what the clients were seen to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmconform.reference.streams.form import Form

_COMMENTS = ("", " keep-alive", " ping - 2026-11-22 10:00:00.000000+00:00", " OPENROUTER PROCESSING",
             " \u2713 still working", " \t")
_RETRIES = (0, 1000, 3000, 15000)
_KEEP_ALIVE_CHANCE = 0.3
_COMMENT_CHANCE = 0.3
_ID_CHANCE = 0.6
_RETRY_CHANCE = 0.15
_EVENT_LINE_CHANCE = 0.5
_EVENT_AFTER_CHANCE = 0.5


@dataclass(frozen=True)
class Trouble:
    """A legal form a real client reads wrongly."""

    client: str  # "openai-python" (the SDK the client checks replay through) or "openai-node" (Void's)
    what: str


AFTER_ID = Trouble("openai-python", "a block without data after an `id:` line: openai-python dispatches it as an "
                                    "event with empty data, and fails to parse it")
RETRY_ALONE = Trouble("openai-python", "a `retry:` line in a block without data: openai-python dispatches it as an "
                                       "event with empty data, and fails to parse it")
EVENT_ON_CHAT = Trouble("openai-node", "`event: message` on a chat chunk: openai-node hands its caller "
                                       "{event, data} instead of the chunk")


@dataclass
class Framed:
    """The stream as blocks of lines (an event, with the comments and keep-alives before it); "" is a blank line."""

    blocks: list[list[str]] = field(default_factory=list)
    effects: set[str] = field(default_factory=set)
    troubles: set[Trouble] = field(default_factory=set)


class _Framer:
    def __init__(self, form: Form, event_lines: bool) -> None:
        self.form, self.event_lines = form, event_lines
        self.colon = ":" if form.has("no-space") else ": "
        self.rngs = {name: form.rng(name) for name in ("comments", "keep-alives", "ids", "retry", "event-lines",
                                                       "event-after-data") if form.has(name)}
        self.framed = Framed()
        self.last_id: str | None = None
        self.ids = 0

    def chance(self, feature: str, chance: float) -> bool:
        rng = self.rngs.get(feature)
        if rng is None or rng.random() >= chance:
            return False
        self.framed.effects.add(feature)
        return True

    def field(self, name: str, value: str) -> str:
        return f"{name}{self.colon}{value}"

    def insert(self, feature: str, lines: list[str], line: str) -> None:
        lines.insert(self.rngs[feature].randint(0, len(lines)), line)

    def dataless_block(self, lines: list[str], has_retry: bool = False) -> list[str]:
        """A block that dispatches nothing: the WHATWG algorithm discards it, openai-python may not."""
        if self.last_id:
            self.framed.troubles.add(AFTER_ID)
        if has_retry:
            self.framed.troubles.add(RETRY_ALONE)
        return [*lines, ""]

    def block(self, position: int, name: str | None, data: str, done: bool) -> list[str]:
        before: list[str] = []
        if position == 0 and self.chance("retry", 0.5):
            before += self.dataless_block([self.field("retry", str(self.rngs["retry"].choice(_RETRIES)))], True)
        if self.chance("keep-alives", _KEEP_ALIVE_CHANCE if position else 0.5):
            before += self.dataless_block(self.rngs["keep-alives"].choice(([":" + _COMMENTS[1]], [], [":"])))
        # The first event has a comment line before it and one as its last line, so that every answer with the
        # feature has a comment where a reader that mishandles them merges two events.
        if self.chance("comments", _COMMENT_CHANCE if position else 1.0):
            before.append(":" + self.rngs["comments"].choice(_COMMENTS))
        lines = [self.field("data", line) for line in data.split("\n")]
        if name is None and self.event_lines and self.chance("event-lines", _EVENT_LINE_CHANCE if position else 1.0):
            name = "message"
            if not done:
                self.framed.troubles.add(EVENT_ON_CHAT)
        if name is not None:
            # The standard takes the fields of an event in any order: the name may come after the data.
            after = self.chance("event-after-data", _EVENT_AFTER_CHANCE if position else 1.0)
            lines.insert(len(lines) if after else 0, self.field("event", name))
        if self.chance("ids", _ID_CHANCE):
            self.ids += 1
            self.last_id = self.rngs["ids"].choice((str(self.ids), f"evt-{self.ids}", f"{self.ids}:{position}"))
            self.insert("ids", lines, self.field("id", self.last_id))
        if self.chance("retry", _RETRY_CHANCE):
            self.insert("retry", lines, self.field("retry", str(self.rngs["retry"].choice(_RETRIES))))
        if position == 0 and "comments" in self.rngs:
            lines.append(":" + self.rngs["comments"].choice(_COMMENTS))
        elif self.chance("comments", _COMMENT_CHANCE):
            self.insert("comments", lines, ":" + self.rngs["comments"].choice(_COMMENTS))
        return [*before, *lines, ""]


def frame_events(events: list[tuple[str | None, str]], form: Form, event_lines: bool, ends_with_done: bool) -> Framed:
    """`events` are (the name for an `event:` line or None, the data, line breaks included); `event_lines`: an
    unnamed event may get an `event: message` line (the `event-lines` feature of a stream whose events have no
    names); `ends_with_done`: the last one is [DONE], after which openai-python reads nothing."""
    framer = _Framer(form, event_lines)
    for position, (name, data) in enumerate(events):
        done = ends_with_done and position == len(events) - 1
        framer.framed.blocks.append(framer.block(position, name, data, done))
    if form.has("retry") and "retry" not in framer.framed.effects:
        # The feature is on: one `retry:` field at least, inside the first event.
        first = framer.framed.blocks[0]
        first.insert(len(first) - 1, framer.field("retry", "3000"))
        framer.framed.effects.add("retry")
    return framer.framed


def line_ended(blocks: list[list[str]], form: Form) -> list[bytes]:
    """Each block's bytes, every line ended as the form says: LF, CRLF, CR, or any of them line by line. A blank
    line after a CR never ends with a lone LF: the two would read as one CRLF line end, and the event would not end."""
    fixed = "\r\n" if form.has("crlf") else "\r" if form.has("cr") else None
    if fixed is not None or not form.has("mixed-line-ends"):
        end = fixed or "\n"
        return [end.join(block).encode() + end.encode() for block in blocks]
    rng = form.rng("mixed-line-ends")
    previous = "\n"
    written = []
    for block in blocks:
        parts: list[str] = []
        for line in block:
            end = rng.choice(("\n", "\r\n", "\r"))
            if not line and previous == "\r" and end == "\n":
                end = "\r\n"
            parts += (line, end)
            previous = end
        written.append("".join(parts).encode())
    return written
