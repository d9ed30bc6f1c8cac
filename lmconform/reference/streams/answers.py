"""The same generation in other legal pieces: what every API's rewriting shares (its own is its folder's
reference/streams.py). Text, reasoning and arguments are cut into deltas of other sizes (from one character to the
whole string), empty deltas come in between, and objects carry keys no client knows. Concatenated, every delta says
what it said before."""

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
EMPTY_DELTAS = (1, 3)

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


class Extras:
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




def runs(items: list[Any], key_of: Callable[[Any], Any]) -> list[tuple[Any, list[Any]]]:
    """Consecutive items grouped by their key; items without one stand alone (key None)."""
    runs: list[tuple[Any, list[Any]]] = []
    for item in items:
        key = key_of(item)
        if key is not None and runs and runs[-1][0] == key:
            runs[-1][1].append(item)
        else:
            runs.append((key, [item]))
    return runs




