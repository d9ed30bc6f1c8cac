"""Token usage as each API counts it, read into one set of counts: the tokens of the prompt and of the answer, their
total where the API reports one, and the parts counted inside them (prompt tokens read from a cache, answer tokens
spent reasoning). An API's `READING` says where its usage object keeps each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmconform.normalize.events import MISSING


@dataclass(frozen=True)
class UsageFields:
    prompt: str
    completion: str
    total: str | None = None  # Anthropic's usage has no total
    cached: tuple[str, str] | None = None  # (details object, count): part of the prompt's count
    reasoning: tuple[str, str] | None = None  # part of the answer's count


# OpenAI's CompletionUsage (chat and text completions) and the Responses API's ResponseUsage.
COMPLETION_USAGE = UsageFields("prompt_tokens", "completion_tokens", "total_tokens",
                               ("prompt_tokens_details", "cached_tokens"),
                               ("completion_tokens_details", "reasoning_tokens"))
RESPONSE_USAGE = UsageFields("input_tokens", "output_tokens", "total_tokens", ("input_tokens_details", "cached_tokens"),
                             ("output_tokens_details", "reasoning_tokens"))


@dataclass(frozen=True)
class TokenCounts:
    """Each count as sent (MISSING where the usage object leaves it out), under the names the fields have."""

    fields: UsageFields
    prompt: Any
    completion: Any
    total: Any
    cached: Any
    reasoning: Any


def token_counts(usage: Any, fields: UsageFields) -> TokenCounts | None:
    """The counts of a usage object; None when there is no usage object."""
    if not isinstance(usage, dict):
        return None

    def inner(path: tuple[str, str] | None) -> Any:
        details = usage.get(path[0]) if path else None
        return details.get(path[1], MISSING) if isinstance(details, dict) and path else MISSING

    total = usage.get(fields.total, MISSING) if fields.total else MISSING
    return TokenCounts(fields, usage.get(fields.prompt, MISSING), usage.get(fields.completion, MISSING), total,
                       inner(fields.cached), inner(fields.reasoning))
