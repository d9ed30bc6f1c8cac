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
import random
import string
from typing import Any, Literal

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

# Free text is any character UTF-8 can carry: every one but the surrogates (category Cs). Said with the category, not
# with `codec="utf-8"` (`st.text()`'s default), which draws the same characters but makes Hypothesis encode all 1.1
# million code points once per storage directory: 3 to 6 CPU-seconds of every run in a fresh output folder
# (`lmconform check`). Every free text of the generated requests draws from this one set.
SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
utf8_characters = st.characters(exclude_categories=SURROGATES)
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.sampled_from(UNUSUAL_TEXTS),
    st.text(utf8_characters, min_size=1, max_size=40),
)
# What a tool is made of (its name, its parameters) is drawn as a size and a seed that Python's own generator expands:
# drawn member by member, a request's tools took three quarters of its choices (up to 16 tools, each name a character
# at a time, each parameters object nesting), and every choice costs Hypothesis about as much as any other. A seed
# keeps the variety (everything the rules below can build) at a fixed cost of two choices; shrinking takes the size
# towards its smallest and the seed towards 0.
SEEDS = st.integers(0, 2**32 - 1)


def tool_name(size: int, seed: int) -> str:
    """A name `size` characters long: a stem of up to 8 characters from the whole alphabet, which the seed picks,
    repeated to that length (long names are where servers break, and drawn freely they are rare)."""
    chooser = random.Random(seed)
    stem = "".join(chooser.choices(NAME_ALPHABET, k=chooser.randint(1, 8)))
    return (stem * size)[:size]


tool_names = st.builds(tool_name, st.integers(min_value=1, max_value=64), SEEDS)
PROPERTY_NAMES = ("a", "city", "unit", "query", "path", "limit", "options", "filters", "items", "enabled", "start_date",
                  "max_results", "location", "details", "x")


# A tool's parameters: the number of properties of its top object (shrinking to 0, `{"type": "object", "properties":
# {}}`, the plainest) and a seed for the rest. A property nests (an object or an array) half the time: nesting is
# where converters of parameters to grammars break, and a request's tools reach two objects deep often; more often
# would grow each schema exponentially with depth.
KINDS = ("leaf", "object", "array", "leaf")
LEAVES = ("string", "described", "enum", "integer", "number", "boolean")
SHORT_TEXTS = (*WORDS, *UNUSUAL_TEXTS)
MAX_PROPERTIES = 4
PROPERTY_COUNTS = st.integers(0, MAX_PROPERTIES)
# A tool's description from the texts above (every kind of unusual text among them), not drawn a character at a
# time: a request offers up to 16 tools, and drawing theirs freely cost as much as the rest of the request.
DESCRIPTIONS = st.one_of(st.just(""), st.sampled_from(SHORT_TEXTS))
# Every strategy a draw uses is built once, here: building one inside a draw (and validating it) cost about a third
# of a request's generation.
BOOLEANS = st.booleans()
MOSTLY = st.sampled_from((False, True, True, True))  # True three times in four; shrinks to False, the plainer request
CALL_NUMBERS = st.integers(0, 10**6)
CONTENT_FORMS = st.sampled_from(("string", "one part", "two parts"))
SYSTEM_ROLES = st.sampled_from(("system", "developer"))
TURNS = st.integers(min_value=0, max_value=2)
CALL_COUNTS = st.integers(1, 3)  # calls in one assistant turn of a history
TOOL_CHOICES = st.sampled_from(("absent", "none", "auto", "required", "named"))


def one_of(draw, items: list):
    """One of `items` (a list of dicts, which sampled_from cannot cache), by its position."""
    return items[draw(st.integers(0, len(items) - 1))]


def _leaf(chooser: random.Random) -> dict:
    kind = chooser.choice(LEAVES)
    if kind == "described":
        return {"type": "string", "description": chooser.choice(SHORT_TEXTS)}
    if kind == "enum":
        return {"type": "string", "enum": chooser.sample(WORDS, chooser.randint(1, 4))}
    return {"type": kind}


def _value(chooser: random.Random, depth: int) -> dict:
    """A property's schema at `depth`."""
    kind = chooser.choice(KINDS) if depth < MAX_DEPTH else "leaf"
    if kind == "leaf":
        return _leaf(chooser)
    if kind == "object":
        return _object(chooser, depth + 1, chooser.randint(0, MAX_PROPERTIES))
    return {"type": "array", "items": _value(chooser, depth + 1)}


def _object(chooser: random.Random, depth: int, count: int) -> dict:
    names = chooser.sample(PROPERTY_NAMES, count)
    schema: dict[str, Any] = {"type": "object", "properties": {name: _value(chooser, depth) for name in names}}
    required = [name for name in names if chooser.random() < 0.5]
    if required:
        schema["required"] = required
    return schema


def parameters(count: int, seed: int) -> dict:
    """The parameters object a seed expands into, with `count` properties at its top."""
    return _object(random.Random(seed), 0, count)


PARAMETERS = st.builds(parameters, PROPERTY_COUNTS, SEEDS)


def instance(schema: dict) -> Any:
    """A value `schema` accepts (every property given), for the arguments of a tool call in a history."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {name: instance(child) for name, child in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema["items"])]
    scalars: dict[Any, object] = {"string": "Paris", "integer": 3, "number": 1.5, "boolean": True}
    return scalars[kind]


@st.composite
def _function(draw) -> dict:
    """A function's name, description and parameters, in neither API's wrapping."""
    function: dict[str, Any] = {"name": draw(tool_names)}
    description = draw(DESCRIPTIONS)
    if description:
        function["description"] = description
    if draw(MOSTLY):
        function["parameters"] = draw(PARAMETERS)
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
    extra: dict[str, list] = {"annotations": []} if part_type == "output_text" else {}
    return [{"type": part_type, "text": piece, **extra} for piece in pieces]


def call_ids(draw, count: int, prefix: str) -> list[str]:
    return [f"{prefix}{draw(CALL_NUMBERS)}_{index}" for index in range(count)]


