"""The events of a parsed event stream: SSEEvent, one dispatched event, and SSEEvents, a stream's events kept
compactly (most of them as where their data lies in the read they arrived in) and made when asked for.
lmconform.wire.sse builds them; everyone else reads them."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass


# slots: an event is mostly its two strings; a per-instance __dict__ would add a third of the body again.
@dataclass(frozen=True, slots=True)
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
        form = _get_raw(self, SSEEvent)
        if type(form) is tuple:  # one data line (see _raw below): its text is at hand, no bytes to rebuild
            text = form[2] + self.data
        else:
            text = form.decode("utf-8", errors="replace").rstrip("\r\n")
        return text if len(text) <= limit else text[:limit] + "…"

    def label(self) -> str:
        return f"SSE event #{self.index} (byte {self.offset})"


# Events are made without the generated __init__: a frozen dataclass's __init__ stores each field
# through object.__setattr__, about 0.7 µs an event, as much as httpx-sse spends parsing the whole event. The
# slots' own descriptors store the same values at half the cost; SSEEvent(...) is unchanged for everyone else.
_new = object.__new__
_set_index, _set_event, _set_data, _set_id, _set_retry, _set_raw, _set_offset = (
    SSEEvent.__dict__[name].__set__ for name in ("index", "event", "data", "id", "retry", "raw", "offset")
)


def make_event(index: int, event: str, data: str, id: str | None, retry: int | None,
               raw: bytes | tuple[bytes, bytes, str], offset: int) -> SSEEvent:
    made = _new(SSEEvent)
    _set_index(made, index)
    _set_event(made, event)
    _set_data(made, data)
    _set_id(made, id)
    _set_retry(made, retry)
    _set_raw(made, raw)
    _set_offset(made, offset)
    return made


# Most events are one data line and the blank line. Keeping their exact bytes beside their decoded data would hold
# every stream twice in memory, so for those the `raw` slot holds a shared (line start, line ends) form instead, and
# `raw` rebuilds the bytes when asked: exactly, since the data was decoded strictly and encodes back to the bytes
# it came from. Every other event keeps its bytes. The dataclass's __init__, replace, pickling, eq, hash and repr
# all go through the property, so both kinds are the same to everyone else.
_get_raw = SSEEvent.__dict__["raw"].__get__


def _raw(event: SSEEvent) -> bytes:
    raw = _get_raw(event, SSEEvent)
    if type(raw) is tuple:
        start, ends, _ = raw
        return start + event.data.encode() + ends
    return raw


# The dataclass declares `raw: bytes`, which is what every reader gets; the slot behind it is this module's.
SSEEvent.raw = property(_raw, _set_raw, doc="The exact bytes of the lines that made the event, line ends included.")  # type: ignore[misc, assignment]
# (line start, line ends, line start as text), by line end: shared by every event of that form.
_FORMS = {sep: ((b"data: ", sep * 2, "data: "), (b"data:", sep * 2, "data:")) for sep in (b"\n", b"\r\n")}
_FORM_LIST = [form for forms in _FORMS.values() for form in forms]  # a form's number in SSEEvents is its place here
FORM_NUMBERS = {sep: (2 * place, 2 * place + 1) for place, sep in enumerate(_FORMS)}  # (spaced, bare) by line end
_WHOLE = -1  # SSEEvents._read of an event kept as an object


class SSEEvents(Sequence[SSEEvent]):
    """The events of a stream, in order, as a sequence of SSEEvent.

    An event of one data line and the blank line (most events) is kept as where it is: the read it arrived in
    (which the exchange keeps anyway), where its data lies in that read, its body offset and its line form. Its
    SSEEvent is made when asked for, equal to the one the parser would have built. An object per event, its
    data string and two integers cost 2.7 times the body; this costs under half of it (`make bench`), and an event
    whose data alone is read (lmconform.wire.http's payloads) is never made at all. Every other event is kept
    whole.
    """

    def __init__(self, events: Iterable[SSEEvent] = ()) -> None:
        self._reads: list[bytes] = []
        self._read = array("q")  # per event: its read's place in _reads, or _WHOLE
        self._start = array("q")  # per event: where its data starts and ends in its read
        self._end = array("q")
        self._offset = array("q")  # per event: its byte offset in the body
        self._form = bytearray()  # per event: its form's number in _FORM_LIST
        self._whole: dict[int, SSEEvent] = {}
        # The last event id is the same for every event between two that change it: kept where it changes.
        self._id_from = array("q")
        self._ids: list[str | None] = []
        for event in events:
            self.append(event)

    def append(self, event: SSEEvent) -> None:
        """Keep an event whole."""
        index = len(self._read)
        self._whole[index] = event
        self._note_id(index, event.id)
        for column in (self._read, self._start, self._end, self._offset):
            column.append(_WHOLE)
        self._form.append(0)

    def _note_id(self, index: int, last_id: str | None) -> None:
        """The last event id from the event at `index` on (at most one change per index: the latest holds)."""
        if self._id_from and self._id_from[-1] == index:
            self._ids[-1] = last_id
        elif not self._ids or self._ids[-1] != last_id:
            self._id_from.append(index)
            self._ids.append(last_id)

    def _keep_read(self, read: bytes) -> int:
        if not self._reads or self._reads[-1] is not read:
            self._reads.append(read)
        return len(self._reads) - 1

    def data(self, index: int) -> str:
        """The data of the event at `index`, without making the event."""
        read = self._read[index]
        if read == _WHOLE:
            return self._whole[index].data
        return self._reads[read][self._start[index]:self._end[index]].decode("utf-8")

    def datas(self) -> Iterator[str]:
        return (self.data(index) for index in range(len(self._read)))

    def _make(self, index: int) -> SSEEvent:
        read = self._read[index]
        if read == _WHOLE:
            return self._whole[index]
        data = self._reads[read][self._start[index]:self._end[index]].decode("utf-8")
        last_id = self._ids[bisect_right(self._id_from, index) - 1]
        return make_event(index, "message", data, last_id, None, _FORM_LIST[self._form[index]], self._offset[index])

    def __len__(self) -> int:
        return len(self._read)

    def __getitem__(self, index):  # an int gives an event, a slice a list of them
        if isinstance(index, slice):
            return [self._make(position) for position in range(*index.indices(len(self._read)))]
        if index < 0:
            index += len(self._read)
        if not 0 <= index < len(self._read):
            raise IndexError("event index out of range")
        return self._make(index)

    def __iter__(self) -> Iterator[SSEEvent]:
        # _make, inlined and walking the id changes in step: every reader of a stream iterates it.
        reads, whole, forms, id_from, ids = self._reads, self._whole, _FORM_LIST, self._id_from, self._ids
        change, last_id = 0, None
        following = id_from[0] if id_from else -1  # where the next id change applies
        columns = zip(self._read, self._start, self._end, self._offset, self._form)
        for index, (read, start, end, offset, form) in enumerate(columns):
            if index == following:
                last_id = ids[change]
                change += 1
                following = id_from[change] if change < len(id_from) else -1
            if read == _WHOLE:
                yield whole[index]
                continue
            made = _new(SSEEvent)
            _set_index(made, index)
            _set_event(made, "message")
            _set_data(made, reads[read][start:end].decode("utf-8"))
            _set_id(made, last_id)
            _set_retry(made, None)
            _set_raw(made, forms[form])
            _set_offset(made, offset)
            yield made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SSEEvents | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as the list it stands for

    def __repr__(self) -> str:
        return f"SSEEvents({list(self)!r})"
