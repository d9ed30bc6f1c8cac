"""The generated requests of LM Studio's native chat (lmconform.fuzz): valid bodies and the bodies that hold every
feature a generated request may have. Every rule of its request is one member's, so the request schema's own
constraints (lmconform.fuzz.derived) yield all its violations; the streams source has no native form."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from lmconform.fuzz.bodies import BOOLEANS, texts

OUTPUT_CAPS = st.integers(1, 64)
REASONING = st.sampled_from(("off", "low", "medium", "high", "on"))


@st.composite
def native_chat_bodies(draw) -> dict:
    """A valid native chat request: `input` as a string or as text items, a system prompt, reasoning and sampling
    options now and then (no integrations: a plugin or an MCP server is the user's own)."""
    if draw(BOOLEANS):
        given: Any = draw(texts)
    else:
        given = [{"type": draw(st.sampled_from(("message", "text"))), "content": draw(texts)}
                 for _ in range(draw(st.integers(1, 2)))]
    body: dict[str, Any] = {"input": given}
    if draw(BOOLEANS):
        body["system_prompt"] = draw(texts)
    if draw(BOOLEANS):
        body["stream"] = True
    if draw(BOOLEANS):
        body["reasoning"] = draw(REASONING)
    if draw(BOOLEANS):
        body["max_output_tokens"] = draw(OUTPUT_CAPS)
    if draw(BOOLEANS):
        body["temperature"] = draw(st.sampled_from((0, 0.5, 1)))
    if draw(BOOLEANS):
        body["store"] = draw(BOOLEANS)
    return body


BODIES = native_chat_bodies()
VIOLATIONS = ()


def expectation(body: dict) -> str:
    """What a valid request must get."""
    return "success"


def representatives(function: dict) -> list[dict]:
    """Bodies that hold every feature a generated request may have (native chat offers no functions)."""
    return [{"input": "Hello", "stream": stream, "reasoning": "low", "system_prompt": "Be brief."}
            for stream in (False, True)]
