"""Chat completions streams in generated wire forms (lmconform.reference.streams): the features a chat stream can
take, and the plain chunks of the door rewritten as a form asks — text, reasoning and arguments cut into deltas of
other sizes, empty deltas, reasoning under either field name, `usage: null` on every chunk, unknown keys."""

from __future__ import annotations

from typing import Any

from lmconform.reference.streams.answers import EMPTY_DELTAS, WORDS, Chunk, Extras, pieces, runs
from lmconform.reference.streams.form import FEATURES as CATALOGUE
from lmconform.reference.streams.form import Form
from lmconform.reference.streams.json_text import JsonWriter
from lmconform.reference.streams.render import Rendered, rendered

# Every feature of the catalogue but the one for streams whose events are named.
FEATURES = tuple(name for name in CATALOGUE if name != "no-event-lines")


def render(plain: list[Chunk], reasoning: str | None, form: Form) -> Rendered:
    """The chunks the plain server would stream (without [DONE]), with `reasoning` first if any, in the form."""
    chunks, effects = chat_chunks(plain, reasoning, form)
    writer = JsonWriter(form)
    events: list[tuple[str | None, str]] = [(None, writer.dumps(chunk)) for chunk in chunks]
    events.append((None, "[DONE]"))
    return rendered(form, events, effects, writer, FEATURES, ends_with_done=True)


def _choice(chunk: Chunk) -> dict[str, Any] | None:
    choices = chunk.get("choices")
    return choices[0] if isinstance(choices, list) and len(choices) == 1 else None


def _sole_choice(chunk: Chunk) -> dict[str, Any]:
    """The choice of a chunk known to hold one: the door's first chunk (a template), or a piece of a run (_run_key)."""
    choice = _choice(chunk)
    assert choice is not None, "the door's first chunk and every piece of a run hold one choice"
    return choice


def _with_delta(template: Chunk, delta: dict[str, Any]) -> Chunk:
    choice = {**_sole_choice(template), "delta": delta, "finish_reason": None}
    return {**template, "choices": [choice]}


def _run_key(chunk: Chunk) -> Any:
    """What a chunk adds to, when it is one piece of a string: a text field, or one call's arguments."""
    choice = _choice(chunk) or {}
    delta = choice.get("delta")
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
    delta = _sole_choice(chunk)["delta"]
    return delta["tool_calls"][0]["function"]["arguments"] if isinstance(key, tuple) else delta[key]


def _delta_for(key: Any, piece: str) -> dict[str, Any]:
    if isinstance(key, tuple):
        return {"tool_calls": [{"index": key[1], "function": {"arguments": piece}}]}
    return {key: piece}


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
        for key, run in runs(chunks, _run_key):
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
        for _ in range(rng.randint(*EMPTY_DELTAS)):
            chunks.insert(rng.randint(1, finish), _with_delta(plain[0], {"content": ""}))
            finish += 1
        effects.add("empty-deltas")
    if form.has("usage-null"):
        chunks = [chunk if "usage" in chunk else {**chunk, "usage": None} for chunk in chunks]
        effects.add("usage-null")
    extras = Extras(form)
    chunks = [_extra_chat_keys(chunk, extras) for chunk in chunks]
    if extras.added:
        effects.add("extra-keys")
    return chunks, effects


def _extra_chat_keys(chunk: Chunk, extras: Extras) -> Chunk:
    choice = _choice(chunk)
    if choice is not None and isinstance(choice.get("delta"), dict):
        delta = extras(choice["delta"])
        if isinstance(delta.get("tool_calls"), list):
            delta = {**delta, "tool_calls": [extras(entry) for entry in delta["tool_calls"]]}
        chunk = {**chunk, "choices": [extras({**choice, "delta": delta})]}
    return extras(chunk)
