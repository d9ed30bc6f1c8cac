"""Usage adds up (generation.usage.adds_up): each of its three rules fails alone, under each API's names for the
counts. The catalogue's fault (usage-total-wrong) proves the check on a whole answer; the rules are shown here one
by one, on the usage objects the servers send."""

from __future__ import annotations

import pytest

from lmconform.checks.usage import _wrong
from lmconform.normalize.usage import COMPLETION_USAGE, RESPONSE_USAGE, token_counts

CHAT = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17,
        "prompt_tokens_details": {"cached_tokens": 8}, "completion_tokens_details": {"reasoning_tokens": 3}}
RESPONSES = {"input_tokens": 12, "output_tokens": 5, "total_tokens": 17,
             "input_tokens_details": {"cached_tokens": 8}, "output_tokens_details": {"reasoning_tokens": 3}}


def _with(usage: dict, path: tuple[str, ...], value: int) -> dict:
    changed = {key: dict(item) if isinstance(item, dict) else item for key, item in usage.items()}
    holder = changed
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return changed


@pytest.mark.parametrize(("usage", "fields", "prefix"), [(CHAT, COMPLETION_USAGE, "prompt"),
                                                        (RESPONSES, RESPONSE_USAGE, "input")])
def test_each_rule_of_usage_fails_alone_and_a_usage_that_adds_up_passes(usage, fields, prefix):
    assert _wrong(token_counts(usage, fields)) is None
    output = "completion" if prefix == "prompt" else "output"
    total = _wrong(token_counts(_with(usage, ("total_tokens",), 20), fields))
    assert total == (f"total_tokens = {prefix}_tokens + {output}_tokens = 17", "total_tokens 20")
    cached = _wrong(token_counts(_with(usage, (f"{prefix}_tokens_details", "cached_tokens"), 13), fields))
    assert cached == (f"cached tokens ≤ {prefix}_tokens (12)", "13 cached")
    reasoning = _wrong(token_counts(_with(usage, (f"{output}_tokens_details", "reasoning_tokens"), 6), fields))
    assert reasoning == (f"reasoning tokens ≤ {output}_tokens (5)", "6 reasoning")
    assert _wrong(token_counts(_with(usage, ("prompt_tokens" if prefix == "prompt" else "input_tokens",), "12"),
                               fields)) is None  # not a count: the schema checks report it
