"""A whole answer in a form: the plain chunks or events rewritten (by the API's reference/streams.py, with answers),
written as JSON (json_text), framed as an event stream (frames) and cut into writes (writes), with a sentence saying
what the form did."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from lmconform.reference.streams.form import FEATURES, LINE_ENDS, TRANSPORT, Form
from lmconform.reference.streams.frames import Trouble, frame_events, line_ended
from lmconform.reference.streams.json_text import JsonWriter
from lmconform.reference.streams.writes import Write, cut_writes

PLAIN_SHOWS = "the plain form"


@dataclass(frozen=True)
class Rendered:
    form: Form
    writes: tuple[Write, ...]
    shows: tuple[str, ...]  # what each feature that changed something did, in the catalogue's order
    effective: frozenset[str]  # those features
    troubles: frozenset[Trouble]

    @property
    def body(self) -> bytes:
        return b"".join(write.data for write in self.writes)

    @property
    def cause(self) -> str:
        """How a finding's cause reads: "CRLF line ends + a 4-byte character split across writes"."""
        return " + ".join(self.shows) or PLAIN_SHOWS

    def without(self, names: AbstractSet[str]) -> Rendered:
        """The same answer said to have taken no effect of the features `names` (the caller undoes what they did)."""
        named = [name for name in FEATURES if name in self.effective]  # `shows` is in this order
        return replace(self, effective=self.effective - names,
                       shows=tuple(shown for name, shown in zip(named, self.shows, strict=True) if name not in names))


def rendered(form: Form, events: list[tuple[str | None, str]], effects: set[str], writer: JsonWriter,
             features: tuple[str, ...], ends_with_done: bool = False, always: frozenset[str] = frozenset()) -> Rendered:
    """The events (each with the name for its `event:` line, or None) framed and cut into writes as `form` says,
    among the `features` the API's streams can take; `always`: features that change every answer of the API."""
    framed = frame_events(events, form, "event-lines" in features, ends_with_done)
    cut = cut_writes(line_ended(framed.blocks, form), form)
    every_answer = {"no-space", "key-order", "json-space", *LINE_ENDS, *TRANSPORT, *always}
    effective = effects | framed.effects | cut.effects | (every_answer & form.features)
    effective |= {name for name, did in (("unicode-escapes", writer.escaped), ("multiline-data", writer.broken)) if did}
    effective &= set(features)
    shows = tuple(cut.shows.get(name, FEATURES[name].shows) for name in FEATURES if name in effective)
    return Rendered(form, tuple(cut.writes), shows, frozenset(effective), frozenset(framed.troubles))
