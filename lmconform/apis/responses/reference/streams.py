"""Responses streams in generated wire forms (lmconform.reference.streams): the features a Responses stream can
take, and the plain events of the door rewritten as a form asks — deltas of other sizes, empty deltas, unknown keys,
and the events' names left out of `event:` lines."""

from __future__ import annotations

from typing import Any

from lmconform.reference.streams.answers import EMPTY_DELTAS, Event, Extras, pieces, runs
from lmconform.reference.streams.form import FEATURES as CATALOGUE
from lmconform.reference.streams.form import Form
from lmconform.reference.streams.json_text import JsonWriter
from lmconform.reference.streams.render import Rendered, rendered

# Its events are named: no feature that names them `message`, nor the chat chunk's own fields.
FEATURES = tuple(name for name in CATALOGUE if name not in ("event-lines", "reasoning-content", "usage-null"))


def render(plain: list[Event], form: Form) -> Rendered:
    """The events the plain server would stream (not yet numbered), in the form, each with its sequence_number."""
    events, effects = responses_events(plain, form)
    writer = JsonWriter(form)
    named = not form.has("no-event-lines")
    framed = [(event["type"] if named else None, writer.dumps({**event, "sequence_number": number}))
              for number, event in enumerate(events)]
    # Leaving the names out changes every answer whose events had them: all of them.
    return rendered(form, framed, effects, writer, FEATURES, always=frozenset({"no-event-lines"}))


_DELTA_EVENTS = ("response.output_text.delta", "response.reasoning_text.delta",
                 "response.function_call_arguments.delta")


def _delta_key(event: Event) -> Any:
    if event.get("type") in _DELTA_EVENTS:
        return (event["type"], event.get("item_id"), event.get("content_index"))
    return None


def responses_events(plain: list[Event], form: Form) -> tuple[list[Event], set[str]]:
    """The events of a Responses stream (not yet numbered) in the form, and the features that changed something."""
    effects: set[str] = set()
    events: list[Event] = []
    fragments = form.rng("fragments") if form.has("fragments") else None
    empty = form.rng("empty-deltas") if form.has("empty-deltas") else None
    for key, run in runs(plain, _delta_key):
        if key is None:
            events += run
            continue
        if fragments is not None:
            effects.add("fragments")
            text = "".join(event["delta"] for event in run)
            run = [{**run[0], "delta": piece} for piece in pieces(text, fragments)]
        if empty is not None:
            effects.add("empty-deltas")
            for _ in range(empty.randint(*EMPTY_DELTAS)):
                run.insert(empty.randint(0, len(run)), {**run[0], "delta": ""})
        events += run
    extras = Extras(form)
    events = [_extra_responses_keys(event, extras) for event in events]
    if extras.added:
        effects.add("extra-keys")
    return events, effects


def _extra_responses_keys(event: Event, extras: Extras) -> Event:
    nested = {key: extras(value) for key, value in event.items()
              if key in ("item", "part", "response") and isinstance(value, dict)}
    return extras({**event, **nested})
