"""A whole answer in a form: the plain chunks or events rewritten (answers), written as JSON (json_text), framed
as an event stream (frames) and cut into writes (writes), with a sentence saying what the form did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmconform.reference.streams.answers import chat_chunks, responses_events
from lmconform.reference.streams.form import CHAT, FEATURES, LINE_ENDS, RESPONSES, Form
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


def _rendered(form: Form, api: str, events: list[tuple[str | None, str]], effects: set[str],
              writer: JsonWriter) -> Rendered:
    framed = frame_events(events, form, api)
    cut = cut_writes(line_ended(framed.blocks, form), form)
    always = {"no-space", "key-order", "json-space", *LINE_ENDS, *({"no-event-lines"} if api == RESPONSES else ())}
    effective = effects | framed.effects | cut.effects | (always & form.features)
    effective |= {name for name, did in (("unicode-escapes", writer.escaped), ("multiline-data", writer.broken)) if did}
    effective &= {name for name, feature in FEATURES.items() if api in feature.apis}
    shows = tuple(cut.shows.get(name, FEATURES[name].shows) for name in FEATURES if name in effective)
    return Rendered(form, tuple(cut.writes), shows, frozenset(effective), frozenset(framed.troubles))


def render_chat(plain: list[dict[str, Any]], reasoning: str | None, form: Form) -> Rendered:
    """The chunks the plain server would stream (without [DONE]), with `reasoning` first if any, in the form."""
    chunks, effects = chat_chunks(plain, reasoning, form)
    writer = JsonWriter(form)
    events = [(None, writer.dumps(chunk)) for chunk in chunks] + [(None, "[DONE]")]
    return _rendered(form, CHAT, events, effects, writer)


def render_responses(plain: list[dict[str, Any]], form: Form) -> Rendered:
    """The events the plain server would stream (not yet numbered), in the form, each with its sequence_number."""
    events, effects = responses_events(plain, form)
    writer = JsonWriter(form)
    named = not form.has("no-event-lines")
    framed = [(event["type"] if named else None, writer.dumps({**event, "sequence_number": number}))
              for number, event in enumerate(events)]
    return _rendered(form, RESPONSES, framed, effects, writer)
