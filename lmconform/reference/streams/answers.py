"""The same generation in other legal pieces: the plain chunks of a chat stream, or the plain events of a Responses
stream, as the reference server renders them, rewritten the ways a form asks. Text, reasoning and arguments are cut
into deltas of other sizes (from one character to the whole string), empty deltas come in between, reasoning is
sent under either field name, and objects carry keys no client knows. Concatenated, every delta says what it said
before."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lmconform.reference.streams.form import Form

# Word by word with its spaces, as the plain renderer cuts text.
WORDS = re.compile(r"\S+\s*|\s+")
_SIZES = (1, 1, 1, 2, 3, 4, 6, 9, 16)
_WHOLE_CHANCE = 0.15
_EXTRA_CHANCE = 0.3
_EMPTY_DELTAS = (1, 3)

Chunk = dict[str, Any]
Event = dict[str, Any]


def pieces(text: str, rng: Any) -> list[str]:
    """`text` word by word, or with a random generator (the `fragments` feature's) in pieces of one character to
    all of it."""
    if rng is None:
        return WORDS.findall(text)
    cut, start = [], 0
    while start < len(text):
        rest = len(text) - start
        size = rest if rng.random() < _WHOLE_CHANCE else min(rest, rng.choice(_SIZES))
        cut.append(text[start:start + size])
        start += size
    return cut


def _extra_value(rng: Any) -> Any:
    """What servers put in keys of their own: a string, a number, null, a flag, an object."""
    return rng.choice((
        lambda: "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.randint(0, 12))),
        lambda: rng.randint(-5, 10**6),
        lambda: None,
        lambda: rng.random() < 0.5,
        lambda: {"prompt_ms": round(rng.random() * 100, 3), "predicted_n": rng.randint(0, 99)},
    ))()


_EXTRA_KEYS = ("x_lmconform", "x_trace", "x_upstream_meta")  # names no spec or server extension uses


class _Extras:
    """Unknown keys added to objects, each with a chance; `added` says whether any was."""

    def __init__(self, form: Form) -> None:
        self.rng = form.rng("extra-keys") if form.has("extra-keys") else None
        self.added = False

    def __call__(self, value: dict[str, Any]) -> dict[str, Any]:
        if self.rng is None or self.rng.random() >= _EXTRA_CHANCE:
            return value
        key = self.rng.choice(_EXTRA_KEYS)
        if key in value:
            return value
        self.added = True
        return {**value, key: _extra_value(self.rng)}


# --- chat completions ---------------------------------------------------------------------------------------------


def _choice(chunk: Chunk) -> dict[str, Any] | None:
    choices = chunk.get("choices")
    return choices[0] if isinstance(choices, list) and len(choices) == 1 else None


def _with_delta(template: Chunk, delta: dict[str, Any]) -> Chunk:
    choice = {**_choice(template), "delta": delta, "finish_reason": None}
    return {**template, "choices": [choice]}


def _run_key(chunk: Chunk) -> Any:
    """What a chunk adds to, when it is one piece of a string: a text field, or one call's arguments."""
    choice = _choice(chunk)
    delta = choice.get("delta") if choice else None
    if not isinstance(delta, dict) or choice.get("finish_reason") is not None or len(delta) != 1:
        return None
    (field, value), = delta.items()
    if field in ("content", "reasoning", "reasoning_content") and isinstance(value, str):
        return field
    if field == "tool_calls" and isinstance(value, list) and len(value) == 1:
        entry = value[0]
        if set(entry) == {"index", "function"} and set(entry["function"]) == {"arguments"}:
            return ("arguments", entry["index"])
    return None


def _piece_of(chunk: Chunk, key: Any) -> str:
    delta = _choice(chunk)["delta"]
    return delta["tool_calls"][0]["function"]["arguments"] if isinstance(key, tuple) else delta[key]


def _delta_for(key: Any, piece: str) -> dict[str, Any]:
    if isinstance(key, tuple):
        return {"tool_calls": [{"index": key[1], "function": {"arguments": piece}}]}
    return {key: piece}


def _runs(items: list[Any], key_of: Callable[[Any], Any]) -> list[tuple[Any, list[Any]]]:
    """Consecutive items grouped by their key; items without one stand alone (key None)."""
    runs: list[tuple[Any, list[Any]]] = []
    for item in items:
        key = key_of(item)
        if key is not None and runs and runs[-1][0] == key:
            runs[-1][1].append(item)
        else:
            runs.append((key, [item]))
    return runs


def chat_chunks(plain: list[Chunk], reasoning: str | None, form: Form) -> tuple[list[Chunk], set[str]]:
    """The chunks of a chat stream (without [DONE]) in the form, and the features that changed something."""
    effects: set[str] = set()
    chunks = list(plain)
    if reasoning:
        field = "reasoning_content" if form.has("reasoning-content") else "reasoning"
        effects |= {"reasoning-content"} & form.features
        chunks[1:1] = [_with_delta(plain[0], {field: piece}) for piece in WORDS.findall(reasoning)]
    if form.has("fragments"):
        rng, rewritten = form.rng("fragments"), []
        for key, run in _runs(chunks, _run_key):
            if key is None:
                rewritten += run
                continue
            effects.add("fragments")
            text = "".join(_piece_of(chunk, key) for chunk in run)
            rewritten += [_with_delta(run[0], _delta_for(key, piece)) for piece in pieces(text, rng)]
        chunks = rewritten
    if form.has("empty-deltas"):
        rng = form.rng("empty-deltas")
        finish = next((i for i, chunk in enumerate(chunks) if (_choice(chunk) or {}).get("finish_reason")),
                      len(chunks))
        for _ in range(rng.randint(*_EMPTY_DELTAS)):
            chunks.insert(rng.randint(1, finish), _with_delta(plain[0], {"content": ""}))
            finish += 1
        effects.add("empty-deltas")
    if form.has("usage-null"):
        chunks = [chunk if "usage" in chunk else {**chunk, "usage": None} for chunk in chunks]
        effects.add("usage-null")
    extras = _Extras(form)
    chunks = [_extra_chat_keys(chunk, extras) for chunk in chunks]
    if extras.added:
        effects.add("extra-keys")
    return chunks, effects


def _extra_chat_keys(chunk: Chunk, extras: _Extras) -> Chunk:
    choice = _choice(chunk)
    if choice is not None and isinstance(choice.get("delta"), dict):
        delta = extras(choice["delta"])
        if isinstance(delta.get("tool_calls"), list):
            delta = {**delta, "tool_calls": [extras(entry) for entry in delta["tool_calls"]]}
        chunk = {**chunk, "choices": [extras({**choice, "delta": delta})]}
    return extras(chunk)


# --- Responses ----------------------------------------------------------------------------------------------------

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
    for key, run in _runs(plain, _delta_key):
        if key is None:
            events += run
            continue
        if fragments is not None:
            effects.add("fragments")
            text = "".join(event["delta"] for event in run)
            run = [{**run[0], "delta": piece} for piece in pieces(text, fragments)]
        if empty is not None:
            effects.add("empty-deltas")
            for _ in range(empty.randint(*_EMPTY_DELTAS)):
                run.insert(empty.randint(0, len(run)), {**run[0], "delta": ""})
        events += run
    extras = _Extras(form)
    events = [_extra_responses_keys(event, extras) for event in events]
    if extras.added:
        effects.add("extra-keys")
    return events, effects


def _extra_responses_keys(event: Event, extras: _Extras) -> Event:
    nested = {key: extras(value) for key, value in event.items()
              if key in ("item", "part", "response") and isinstance(value, dict)}
    return extras({**event, **nested})
