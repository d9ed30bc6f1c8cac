"""A prompt longer than the context, as every door answers it: refused 400 in the door's error shape, in the words
its clients read as an overflow (LM Studio's on its own APIs, OpenAI's `context_length_exceeded` on the Responses
API, Anthropic's `prompt is too long` on the Messages API), so that an agent compacts its history and goes on. The
faults of lmconform.reference.faults.server break it: the refusal's stage, or a flag that makes the door answer
instead (the overflow's words as the answer's text, or a stream cut short)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from starlette.responses import Response

from lmconform.reference.faults.registry import apply
from lmconform.reference.faults.server import CONTEXT_OVERFLOW, CONTEXT_OVERFLOW_AS_TEXT, CONTEXT_OVERFLOW_STREAM_CUT
from lmconform.reference.model import CONTEXT_WORDS, Plan, prompt_words

Item = TypeVar("Item")
CUT_AFTER = 2  # the events a cut stream still sends: llama-cpp-python's, in lmconform's own real-server runs


def lmstudio_words(words: int) -> str:
    """LM Studio's message, word for word (its "context the overflows" included), with the prompt's size."""
    return (f"Trying to keep the first {words} tokens when context the overflows. However, the model is loaded with "
            f"context length of only {CONTEXT_WORDS} tokens, which is not enough. Try to load the model with a "
            "larger context length, or provide a shorter input")


def overflow_refusal(messages: list[dict[str, Any]], streamed: bool, faults: frozenset[str],
                     refusal: Callable[[int], Response]) -> Response | None:
    """The door's refusal (`refusal` of the prompt's size) when the prompt does not fit the context, as the faults
    change it; None when it fits, or when a fault makes the door answer it instead."""
    words = prompt_words(messages)
    if words <= CONTEXT_WORDS or CONTEXT_OVERFLOW_AS_TEXT in faults or \
            (streamed and CONTEXT_OVERFLOW_STREAM_CUT in faults):
        return None
    return apply(CONTEXT_OVERFLOW, faults, refusal(words))


def overflow_answered(plan: Plan, messages: list[dict[str, Any]], faults: frozenset[str]) -> Plan:
    """The plan, or under context-overflow-as-text the overflow's words as its text."""
    words = prompt_words(messages)
    if words <= CONTEXT_WORDS or CONTEXT_OVERFLOW_AS_TEXT not in faults:
        return plan
    return Plan(text=lmstudio_words(words))


def overflow_cut(events: list[Item], messages: list[dict[str, Any]], faults: frozenset[str]) -> list[Item]:
    """A stream's events, or under context-overflow-stream-cut its first few only."""
    if prompt_words(messages) <= CONTEXT_WORDS or CONTEXT_OVERFLOW_STREAM_CUT not in faults:
        return events
    return events[:CUT_AFTER]
