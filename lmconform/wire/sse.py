"""Server-sent events, parsed to the WHATWG event-stream algorithm.

Written by hand on purpose: general-purpose SSE clients forgive framing errors (they replace invalid UTF-8,
drop an unterminated last event, skip junk) and say nothing. A conformance suite must accept exactly what the
standard accepts and *report* every deviation with its byte offset, so checks can cite it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event. `raw` is the exact bytes of the lines that made it, line ends included."""

    index: int
    event: str  # "message" when no event field was given
    data: str
    id: str | None  # the last event id at dispatch; None until the stream sets one ("" after a bare `id`)
    retry: int | None  # from a valid retry field among this event's own lines
    raw: bytes
    offset: int  # byte offset of the event's first line in the body

    def excerpt(self, limit: int = 500) -> str:
        text = self.raw.decode("utf-8", errors="replace").rstrip("\r\n")
        return text if len(text) <= limit else text[:limit] + "…"

    def label(self) -> str:
        return f"SSE event #{self.index} (byte {self.offset})"


@dataclass(frozen=True)
class FramingIssue:
    """A deviation from the event-stream format. `kind` is one of FRAMING_KINDS."""

    kind: str
    offset: int
    detail: str
    excerpt: bytes = b""


FRAMING_KINDS = (
    "invalid_utf8",  # a line is not valid UTF-8 (decoded with U+FFFD, as the standard says)
    "unterminated_event",  # the body ended inside an event: no blank line, so the standard discards it
)


@dataclass
class SSEStream:
    events: list[SSEEvent] = field(default_factory=list)
    issues: list[FramingIssue] = field(default_factory=list)
    comments: int = 0  # comment lines (": keep-alive"); allowed, counted


_BOM = b"\xef\xbb\xbf"
_EXCERPT_LIMIT = 200


class SSEParser:
    """Incremental parser: `feed` each network read as it arrives, then `close` at the end of the body.

    Lines are split as bytes and decoded one complete line at a time, so a character split across reads
    decodes intact and an invalid byte can be pinned to its line. Each read is scanned once: the cost is
    linear in the body however it is cut.
    """

    def __init__(self) -> None:
        self.stream = SSEStream()
        self._head: bytearray | None = bytearray()  # the first bytes, until we know whether they are a BOM
        self._offset = 0  # byte offset of `_line` in the body
        self._line = bytearray()  # the current line, not yet ended
        # A CR that was the last byte of a read may be the first half of a CRLF split across reads; the line
        # is held until the next byte arrives so that the line end in `raw` is the one actually sent.
        self._held_cr = False
        self._raw = bytearray()  # the lines of the event being built, line ends included
        self._raw_offset = 0
        self._type = ""
        self._data: list[str] = []
        self._retry: int | None = None
        self._last_id: str | None = None

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Parse one read; return the events it completed.

        An event whose blank line ends in a CR that is the last byte of the read comes with the next read or
        `close`, once it is known whether an LF follows.
        """
        if self._head is not None:
            self._head += data
            if len(self._head) < len(_BOM) and _BOM.startswith(self._head):
                return []
            data = bytes(self._head)
            self._head = None
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
                self._offset = len(_BOM)
        before = len(self.stream.events)
        if self._held_cr and data:
            if data.startswith(b"\n"):
                self._release_held_cr(b"\r\n")
                data = data[1:]
            else:
                self._release_held_cr(b"\r")
        lines = data.splitlines(keepends=True)  # bytes split on LF, CRLF and CR only
        tail = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
        if lines and self._line:
            lines[0] = self._pop_line() + lines[0]
        for line in lines:
            self._take_line(line)
        if tail.endswith(b"\r"):
            self._held_cr = True
            tail = tail[:-1]
        self._line += tail
        return self.stream.events[before:]

    def close(self) -> list[SSEEvent]:
        """End of body: return the events completed by it and report an event left without its blank line."""
        if self._head:
            self._line += self._head
        self._head = None
        before = len(self.stream.events)
        if self._held_cr:
            self._release_held_cr(b"\r")
        if self._raw or self._line:
            pending = bytes(self._raw + self._line)
            no_end = "; its last line has no line end" if self._line else ""
            self._issue(
                "unterminated_event",
                self._raw_offset if self._raw else self._offset,
                f"the body ended inside an event ({len(pending)} bytes after the last blank line{no_end}); "
                "the standard discards it, so it was not dispatched",
                pending,
            )
            self._line.clear()
            self._reset_event()
        return self.stream.events[before:]

    def _pop_line(self) -> bytes:
        line = bytes(self._line)
        self._line.clear()
        return line

    def _release_held_cr(self, line_end: bytes) -> None:
        self._held_cr = False
        self._take_line(self._pop_line() + line_end)

    def _take_line(self, line: bytes) -> None:
        offset = self._offset
        self._offset += len(line)
        if not self._raw:
            self._raw_offset = offset
        self._raw += line
        content = line.rstrip(b"\r\n")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as error:
            text = content.decode("utf-8", errors="replace")
            self._issue(
                "invalid_utf8",
                offset,
                f"byte {offset + error.start} is not valid UTF-8 ({error.reason}); decoded with U+FFFD",
                content,
            )
        if not text:
            self._dispatch()
        elif text[0] == ":":
            self.stream.comments += 1
        else:
            name, _, value = text.partition(":")
            self._field(name, value)

    def _field(self, name: str, value: str) -> None:
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)

    def _dispatch(self) -> None:
        if self._data:  # the standard dispatches nothing for an empty data buffer, only resets
            self.stream.events.append(
                SSEEvent(
                    index=len(self.stream.events),
                    event=self._type or "message",
                    data="\n".join(self._data),
                    id=self._last_id,
                    retry=self._retry,
                    raw=bytes(self._raw),
                    offset=self._raw_offset,
                )
            )
        self._reset_event()

    def _reset_event(self) -> None:
        self._raw.clear()
        self._type = ""
        self._data.clear()
        self._retry = None

    def _issue(self, kind: str, offset: int, detail: str, excerpt: bytes) -> None:
        self.stream.issues.append(FramingIssue(kind, offset, detail, excerpt[:_EXCERPT_LIMIT]))


def parse_sse(reads: Iterable[bytes]) -> SSEStream:
    """Parse a whole body given as its network reads, in order."""
    parser = SSEParser()
    for data in reads:
        parser.feed(data)
    parser.close()
    return parser.stream
