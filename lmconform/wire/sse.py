"""Server-sent events, parsed to the WHATWG event-stream algorithm.

Written by hand on purpose: general-purpose SSE clients forgive framing errors (they replace invalid UTF-8,
drop an unterminated last event, skip junk) and say nothing. A conformance suite must accept exactly what the
standard accepts and *report* every deviation with its byte offset, so checks can cite it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from lmconform.wire.collector import collector_paused
from lmconform.wire.sse_events import FORM_NUMBERS, SSEEvent, SSEEvents, make_event


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


_BOM = b"\xef\xbb\xbf"
_EXCERPT_LIMIT = 200

@dataclass
class SSEStream:
    events: SSEEvents = field(default_factory=SSEEvents)
    issues: list[FramingIssue] = field(default_factory=list)
    comments: int = 0  # comment lines (": keep-alive"); allowed, counted


class SSEParser:
    """Incremental parser: `feed` each network read as it arrives, then `close` at the end of the body.

    Two paths, one behaviour. Most reads are whole events with one kind of line end and valid UTF-8: those are
    found with bytes.find over the read (checked to be UTF-8 once), and each event is kept as where its data lies
    in the read (SSEEvents). Anything else (a line or event cut by the read boundary, mixed or lone-CR line ends,
    invalid UTF-8) goes line by line: lines are split as bytes and decoded one complete line at a time, so a
    character split across reads decodes intact and an invalid byte is pinned to its line. Either way each read is
    scanned a bounded number of times: the cost is linear in the body however it is cut.
    """

    def __init__(self) -> None:
        self.stream = SSEStream()
        self._head: bytearray | None = bytearray()  # the first bytes, until we know whether they are a BOM
        self._offset = 0  # byte offset in the body of the current line's start
        # The current line, not yet ended, as the pieces of each read: joined once when it ends, so a line
        # longer than many reads is not copied again on every read.
        self._line: list[bytes] = []
        # A CR that was the last byte of a read may be the first half of a CRLF split across reads; the line
        # is held until the next byte arrives so that the line end in `raw` is the one actually sent.
        self._held_cr = False
        self._raw: list[bytes] = []  # the complete lines of the event being built, line ends included
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
        before = len(self.stream.events)
        self.take(data)
        return self.stream.events[before:]

    def take(self, data: bytes) -> None:
        """Parse one read, as `feed` does, without making the events it completed (they are in `stream`)."""
        if self._head is not None:
            self._head += data
            if len(self._head) < len(_BOM) and _BOM.startswith(self._head):
                return
            data = bytes(self._head)
            self._head = None
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
                self._offset = len(_BOM)
        # The event cut by the read boundary is finished line by line and kept whole: the read itself is then what
        # the compact events of SSEEvents point into, and it is the exchange's own copy, not a joined one.
        pos = 0
        if self._held_cr and data:
            pos = 1 if data[0] == 0x0A else 0
            self._release_held_cr(b"\r\n" if pos else b"\r")
        pos = self._lines(data, pos, settle=True)  # finish what the last read left open
        pos = self._whole_events(data, pos)
        self._lines(data, pos, settle=False)  # the start of an event the next read completes

    def close(self) -> list[SSEEvent]:
        """End of body: return the events completed by it and report an event left without its blank line."""
        if self._head:
            self._line.append(bytes(self._head))
        self._head = None
        before = len(self.stream.events)
        if self._held_cr:
            self._release_held_cr(b"\r")
        if self._raw or self._line:
            pending = b"".join(self._raw) + b"".join(self._line)
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

    # --- line by line: the reference behaviour, for whatever the fast path does not take -------------------

    def _lines(self, buf: bytes, pos: int, settle: bool) -> int:
        """Take the complete lines of `buf` from `pos`, keeping an unended last line for the next read.

        With `settle`, stop as soon as no line or event is open, where `_whole_events` can take over.
        """
        find, end_of_buf = buf.find, len(buf)
        while pos < end_of_buf:
            if settle and not self._raw and not self._line:
                break
            lf = find(b"\n", pos)
            cr = find(b"\r", pos, end_of_buf if lf < 0 else lf)
            if cr == end_of_buf - 1:  # maybe half a CRLF: wait for the next read's first byte
                self._held_cr = True
                if cr > pos:
                    self._line.append(buf[pos:cr])
                return end_of_buf
            if cr >= 0:
                end = cr + 2 if buf[cr + 1] == 0x0A else cr + 1
            elif lf >= 0:
                end = lf + 1
            else:
                self._line.append(buf[pos:])
                return end_of_buf
            self._take_line(self._pop_line() + buf[pos:end] if self._line else buf[pos:end])
            pos = end
        return pos

    def _pop_line(self) -> bytes:
        line = b"".join(self._line)
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
        self._raw.append(line)
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
            if self._data:
                self._dispatch(b"".join(self._raw), self._raw_offset)
            self._reset_event()
        elif text[0] == ":":
            self.stream.comments += 1
        else:
            name, _, value = text.partition(":")
            self._field(name, value)

    # --- whole events at once ----------------------------------------------------------------------------

    def _whole_events(self, buf: bytes, start: int) -> int:
        """Take the complete events of `buf` from `start` (a line start, no event open); return where they end.

        Only a stretch with one kind of line end (all LF or all CRLF) and valid UTF-8 is taken here, so that an
        event's end is a plain search for two line ends and the stretch decodes in one call; otherwise nothing
        is taken and `_lines` does it all, reporting what it finds.
        """
        stop = buf.rfind(b"\n\n", start) + 2  # just after the last blank line
        if stop >= 2 and buf.find(b"\r", start, stop) < 0:
            sep, blank, text_sep = b"\n", b"\n\n", "\n"
        else:
            sep, blank, text_sep = b"\r\n", b"\r\n\r\n", "\r\n"
            stop = buf.rfind(blank, start) + 4
            if stop < 4:
                return start
            crs = buf.count(b"\r", start, stop)
            if crs != buf.count(b"\n", start, stop) or crs != buf.count(b"\r\n", start, stop):
                return start  # some lone CR or LF: line ends are mixed
        if not buf.isascii():  # an ASCII read is valid UTF-8; any other stretch is decoded once to know
            try:
                str(memoryview(buf)[start:stop], "utf-8")
            except UnicodeDecodeError:
                return start
        events, find, startswith = self.stream.events, buf.find, buf.startswith
        first, step = sep[0], len(sep)
        spaced, bare = FORM_NUMBERS[sep]
        base = self._offset - start  # body offset = base + position in buf
        # SSEEvents' columns, appended to here: this runs once per event of every stream.
        reads, starts, ends, offsets, forms = events._read, events._start, events._end, events._offset, events._form
        kept = -1  # buf's place among the reads SSEEvents keeps, once an event in it is kept
        events._note_id(len(events), self._last_id)
        pos = start
        while pos < stop:
            # One data line then the blank line, by far the most common event: a few slices and no field logic.
            if startswith(b"data: ", pos):
                value, form = pos + 6, spaced
            elif startswith(b"data:", pos):
                value, form = pos + 5, bare
            else:
                value = 0
            if value:
                end = find(sep, value)
                if startswith(blank, end):
                    if kept < 0:
                        kept = events._keep_read(buf)
                    reads.append(kept)
                    starts.append(value)
                    ends.append(end)
                    offsets.append(base + pos)
                    forms.append(form)
                    pos = end + len(blank)
                    continue
            if buf[pos] == first:  # a blank line with no event open dispatches nothing
                pos += step
                continue
            end = find(blank, pos)  # the event's last line ends here, and its blank line follows
            after = end + len(blank)
            for line in buf[pos:end].decode("utf-8").split(text_sep):  # on the line end only: never splitlines
                if line[0] == ":":
                    self.stream.comments += 1
                else:
                    name, _, field_value = line.partition(":")
                    self._field(name, field_value)
            if self._data:
                self._dispatch(buf[pos:after], base + pos)
            self._reset_event()
            events._note_id(len(events), self._last_id)  # an id line changes it for the events that follow
            pos = after
        self._offset = base + stop
        return stop

    # --- fields and dispatch, shared by both paths ---------------------------------------------------------

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

    def _dispatch(self, raw: bytes, offset: int) -> None:
        # Called only with data: the standard dispatches nothing for an empty data buffer, only resets.
        events = self.stream.events
        data = "\n".join(self._data)
        events.append(make_event(len(events), self._type or "message", data, self._last_id, self._retry, raw, offset))

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
    # An event per event of the body, all kept: without the pause, a third of the parse time on a long stream.
    with collector_paused():
        for data in reads:
            parser.take(data)
        parser.close()
    return parser.stream
