"""The generated requests of legacy text completions (lmconform.fuzz): valid bodies and the bodies that hold every
feature a generated request may have. Every rule of its request is one member's, so the request schema's own
constraints (lmconform.fuzz.derived) yield all its violations; the streams source has no completions form."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from lmconform.fuzz.bodies import BOOLEANS, texts

OUTPUT_CAPS = st.integers(1, 64)
STOPS = st.lists(st.sampled_from(("\n", ".", "END", "###")), min_size=1, max_size=4, unique=True)


@st.composite
def completions_bodies(draw) -> dict:
    """A valid text completion request: a prompt (a string, or a list of one), with the suffix of a fill-in-the-middle
    request, stop strings, logprobs, echo and a streamed usage chunk now and then."""
    body: dict[str, Any] = {"prompt": draw(texts) if draw(BOOLEANS) else [draw(texts)]}
    if draw(BOOLEANS):
        body["max_tokens"] = draw(OUTPUT_CAPS)
    if draw(BOOLEANS):
        body["suffix"] = draw(texts)
    if draw(BOOLEANS):
        stops = draw(STOPS)
        body["stop"] = stops[0] if len(stops) == 1 and draw(BOOLEANS) else stops
    if draw(BOOLEANS):
        body["logprobs"] = draw(st.integers(0, 5))
    if draw(BOOLEANS):
        body["echo"] = draw(BOOLEANS)
    if draw(BOOLEANS):
        body["stream"] = True
        if draw(BOOLEANS):
            body["stream_options"] = {"include_usage": draw(BOOLEANS)}
    return body


BODIES = completions_bodies()
VIOLATIONS = ()


def expectation(body: dict) -> str:
    """What a valid request must get."""
    return "success"


def representatives(function: dict) -> list[dict]:
    """Bodies that hold every feature a generated request may have (text completions offer no functions)."""
    body = {"prompt": "def add(a, b):", "suffix": "\n", "stop": ["\n\n"], "logprobs": 1, "echo": True}
    return [{**body, "stream": False}, {**body, "stream": True, "stream_options": {"include_usage": True}}]
