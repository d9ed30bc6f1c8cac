"""What valid request bodies of every API are drawn from, as hypothesis strategies: texts, tool names, functions with
their parameters, message contents and call ids. Each API's folder builds its bodies from them (`fuzz.py`: `BODIES`).

Validity here is semantic, not only a shape a schema accepts: tool names are unique and drawn from the whole alphabet
OpenAI allows (`^[a-zA-Z0-9_-]{1,64}$`); a `tool_choice` that names a function names one that is offered; an
assistant's tool calls name offered tools, carry arguments their parameters accept and are answered by tool results
whose ids match; `stream_options` comes only with `stream: true`. Each strategy shrinks towards the plainest request
(one short user message, no tools), so a finding is reported with the fewest features that still show it.
"""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import strategies as st

MAX_TOOLS = 16
MAX_DEPTH = 3  # objects nested in a tool's parameters, below the parameters object itself
NAME_ALPHABET = string.ascii_letters + string.digits + "_-"
WORDS = ("weather", "Paris", "lookup", "river", "seven", "quartz", "lantern", "orbit", "file", "time")

# Text people send that trips naive handling: emoji (astral and joined), right-to-left scripts, combining marks,
# characters outside the Basic Multilingual Plane, and whitespace that is not a space.
UNUSUAL_TEXTS = (
    "Grüße aus Köln", "مرحبا بالعالم", "שלום עולם", "e\u0301te\u0301 cafe\u0301", "👩‍💻 ships 🚀",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛", "中文，日本語、한국어", "tab\there\nnew line", "\u202eright-to-left override",
)

texts = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.sampled_from(UNUSUAL_TEXTS),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40),
)
# A name of any allowed length: a few characters drawn from the whole alphabet, repeated to a length drawn apart
# (a text strategy rarely draws long strings, and long names are where servers break).
tool_names = st.builds(lambda stem, size: (stem * size)[:size], st.text(st.sampled_from(NAME_ALPHABET), min_size=1,
                       max_size=8), st.integers(min_value=1, max_value=64))
PROPERTY_NAMES = ("a", "city", "unit", "query", "path", "limit", "options", "filters", "items", "enabled", "start_date",
                  "max_results", "location", "details", "x")


# A property nests (an object or an array) half the time: nesting is where converters of parameters to grammars break,
# and a request's tools reach two objects deep often; more often would grow each schema, and the cost of drawing it,
# exponentially with depth. A list, because one_of favours its first branch too much to reach two levels down often.
KINDS = st.sampled_from(("leaf", "object", "array", "leaf"))
LEAVES = st.sampled_from(("string", "described", "enum", "integer", "number", "boolean"))
SHORT_TEXTS = st.sampled_from((*WORDS, *UNUSUAL_TEXTS))
# A tool's description from the texts above (every kind of unusual text among them), not drawn a character at a
# time: a request offers up to 16 tools, and drawing theirs freely cost as much as the rest of the request.
DESCRIPTIONS = st.one_of(st.just(""), SHORT_TEXTS)
# Every strategy a draw uses is built once, here: building one inside a draw (and validating it) cost about a third
# of a request's generation.
BOOLEANS = st.booleans()
MOSTLY = st.sampled_from((False, True, True, True))  # True three times in four; shrinks to False, the plainer request
PROPERTY_COUNTS = st.integers(0, 4)
ENUM_SIZES = st.integers(1, 4)
CALL_NUMBERS = st.integers(0, 10**6)
CONTENT_FORMS = st.sampled_from(("string", "one part", "two parts"))
SYSTEM_ROLES = st.sampled_from(("system", "developer"))
TURNS = st.integers(min_value=0, max_value=2)
CALL_COUNTS = st.integers(1, 3)  # calls in one assistant turn of a history
TOOL_CHOICES = st.sampled_from(("absent", "none", "auto", "required", "named"))


def one_of(draw, items: list):
    """One of `items` (a list of dicts, which sampled_from cannot cache), by its position."""
    return items[draw(st.integers(0, len(items) - 1))]


def _distinct(draw, pool: tuple[str, ...], count: int) -> list[str]:
    """`count` distinct members of `pool`, consecutive from a drawn start: two choices where a list of unique
    members costs one or more per member (each choice of a request costs about as much as any other)."""
    start = draw(st.integers(0, len(pool) - 1))
    return [pool[(start + offset) % len(pool)] for offset in range(count)]


def _leaf(draw) -> dict:
    kind = draw(LEAVES)
    if kind == "described":
        return {"type": "string", "description": draw(SHORT_TEXTS)}
    if kind == "enum":
        return {"type": "string", "enum": _distinct(draw, WORDS, draw(ENUM_SIZES))}
    return {"type": kind}


def _value(draw, depth: int) -> dict:
    """A property's schema at `depth` (drawn in one composite: nested strategies cost most of a request's draw)."""
    kind = draw(KINDS) if depth < MAX_DEPTH else "leaf"
    if kind == "leaf":
        return _leaf(draw)
    if kind == "object":
        return _object(draw, depth + 1)
    return {"type": "array", "items": _value(draw, depth + 1)}


def _object(draw, depth: int) -> dict:
    names = _distinct(draw, PROPERTY_NAMES, draw(PROPERTY_COUNTS))
    schema: dict[str, Any] = {"type": "object", "properties": {name: _value(draw, depth) for name in names}}
    required = [name for name in names if draw(BOOLEANS)]
    if required:
        schema["required"] = required
    return schema


def instance(schema: dict) -> Any:
    """A value `schema` accepts (every property given), for the arguments of a tool call in a history."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {name: instance(child) for name, child in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema["items"])]
    return {"string": "Paris", "integer": 3, "number": 1.5, "boolean": True}[kind]


@st.composite
def _function(draw) -> dict:
    """A function's name, description and parameters, in neither API's wrapping."""
    function: dict[str, Any] = {"name": draw(tool_names)}
    description = draw(DESCRIPTIONS)
    if description:
        function["description"] = description
    if draw(MOSTLY):
        function["parameters"] = _object(draw, 0)
    return function


FUNCTIONS = _function()
FUNCTION_LISTS = st.lists(FUNCTIONS, min_size=1, max_size=MAX_TOOLS, unique_by=lambda function: function["name"])


def arguments(function: dict) -> str:
    return json.dumps(instance(function.get("parameters", {"type": "object"})), ensure_ascii=False)


def content(draw, text: str, part_type: str) -> str | list[dict]:
    """A message's text as a string, or as parts holding it (split in two now and then)."""
    form = draw(CONTENT_FORMS)
    if form == "string":
        return text
    pieces = [text] if form == "one part" or len(text) < 2 else [text[:len(text) // 2], text[len(text) // 2:]]
    # An output_text part carries its annotations (none), as the output it came from did.
    extra = {"annotations": []} if part_type == "output_text" else {}
    return [{"type": part_type, "text": piece, **extra} for piece in pieces]


def call_ids(draw, count: int, prefix: str) -> list[str]:
    return [f"{prefix}{draw(CALL_NUMBERS)}_{index}" for index in range(count)]


