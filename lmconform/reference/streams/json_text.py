"""JSON written the ways a form asks: keys in any order, whitespace between tokens (line breaks too, where the
data is to span several `data:` lines), non-ASCII characters raw or as `\\u` escapes. Every way parses to the same
value."""

from __future__ import annotations

import json
from typing import Any

from lmconform.reference.streams.form import Form

_SPACES = (" ", "  ", "\t", " \t ", "   ")
_SPACE_CHANCE = 0.3
_BREAK_CHANCE = 0.12


class JsonWriter:
    """One per answer: its random generators run on from one value to the next."""

    def __init__(self, form: Form) -> None:
        self.order = form.rng("key-order") if form.has("key-order") else None
        self.space = form.rng("json-space") if form.has("json-space") else None
        self.breaks = form.rng("multiline-data") if form.has("multiline-data") else None
        self.ascii = form.has("unicode-escapes")
        self.escaped = False  # whether an escape replaced a character that was not ASCII
        self.broken = False  # whether a line break went into a text

    def dumps(self, value: Any) -> str:
        out: list[str] = []
        self._write(value, out)
        return "".join(out)

    def _gap(self) -> str:
        gap = ""
        if self.space is not None and self.space.random() < _SPACE_CHANCE:
            gap = self.space.choice(_SPACES)
        if self.breaks is not None and self.breaks.random() < _BREAK_CHANCE:
            gap += "\n"
            self.broken = True
        return gap

    def _scalar(self, value: Any) -> str:
        text = json.dumps(value, ensure_ascii=self.ascii)
        if self.ascii and isinstance(value, str) and not value.isascii():
            self.escaped = True
        return text

    def _write(self, value: Any, out: list[str]) -> None:
        if isinstance(value, dict):
            items = list(value.items())
            if self.order is not None:
                self.order.shuffle(items)
            out.append("{")
            for position, (key, item) in enumerate(items):
                out += ("," if position else "", self._gap(), self._scalar(key), self._gap(), ":", self._gap())
                self._write(item, out)
            out += (self._gap() if items else "", "}")
        elif isinstance(value, list):
            out.append("[")
            for position, item in enumerate(value):
                out += ("," if position else "", self._gap())
                self._write(item, out)
            out += (self._gap() if value else "", "]")
        else:
            out.append(self._scalar(value))
