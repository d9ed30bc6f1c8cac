"""Faults of the optional parameters Codex sends on every request, refused as unknown: `prompt_cache_key` and
`reasoning.effort`. A server that refuses them leaves Codex without an answer, however valid the rest of its request."""

from __future__ import annotations

from typing import Any

from lmconform.reference.faults.registry import flag

PROMPT_CACHE_KEY_REFUSED = flag(
    "responses-prompt-cache-key-refused", api="responses",
    summary="a request with `prompt_cache_key` is refused 400 as an unknown parameter",
    seen_in="proxies that validate the request against the parameters they know (cc-switch #2089)")
REASONING_EFFORT_REFUSED = flag(
    "responses-reasoning-effort-refused", api="responses",
    summary="a request with `reasoning.effort` is refused 400 as an unknown parameter",
    seen_in="proxies and servers that know no reasoning settings (LiteLLM PR #38842)")


def refused_parameter(body: dict[str, Any], faults: frozenset[str]) -> str | None:
    """The parameter a fault refuses that the request sends, by its dotted path, or None."""
    reasoning = body.get("reasoning")
    if REASONING_EFFORT_REFUSED in faults and isinstance(reasoning, dict) and "effort" in reasoning:
        return "reasoning.effort"
    if PROMPT_CACHE_KEY_REFUSED in faults and "prompt_cache_key" in body:
        return "prompt_cache_key"
    return None
