"""The fields of Claude Code's requests that servers refuse or ignore, each a fault of `POST /v1/messages`. Claude Code
sends all of them in its first request for a model id it does not know (every local model): `output_config`,
adaptive thinking, `context_management` edits, `metadata`, `?beta=true` and its beta flags in the `anthropic-beta`
header, `cache_control`, and later a `tool_result` holding an image when a tool reads one. Each refusal is a flag the
door asks about (`refused_field`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lmconform.reference.faults.registry import flag

# Whether a request (its body, its query, its headers) has the field.
Carries = Callable[[dict[str, Any], Mapping[str, str], Mapping[str, str]], bool]
FIELD_REFUSALS: dict[str, tuple[Carries, int, str]] = {}  # each fault's field, and the refusal's status and words
OLDER_API = "Anthropic-compatible servers and proxies that know an older Messages API (anthropics/claude-code #68551, " \
            "#62995)"


def _refusal(name: str, summary: str, carries: Carries, status: int, message: str, seen_in: str = OLDER_API) -> str:
    FIELD_REFUSALS[name] = (carries, status, message)
    return flag(name, api="messages", summary=summary, seen_in=seen_in)


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The system prompt's blocks and every content block of the messages."""
    system = body.get("system")
    found = [block for block in system if isinstance(block, dict)] if isinstance(system, list) else []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        found += [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    return found


def _in_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The blocks a tool_result holds."""
    nested = [block.get("content") for block in _blocks(body) if block.get("type") == "tool_result"]
    return [inner for content in nested if isinstance(content, list) for inner in content if isinstance(inner, dict)]


def _extra(field: str) -> str:
    return f"{field}: Extra inputs are not permitted"


_refusal("messages-output-config-refused", "a request with `output_config` is refused 400",
         lambda body, query, headers: "output_config" in body, 400, _extra("output_config"))
_refusal("messages-adaptive-thinking-refused", '`thinking: {"type": "adaptive"}` is refused 400',
         lambda body, query, headers: isinstance(body.get("thinking"), dict)
         and body["thinking"].get("type") == "adaptive",
         400, "thinking.type: Input should be 'enabled' or 'disabled'")
_refusal("messages-context-management-refused", "a request with `context_management` is refused 400",
         lambda body, query, headers: "context_management" in body, 400, _extra("context_management"))
_refusal("messages-metadata-refused", "a request with `metadata` is refused 400",
         lambda body, query, headers: "metadata" in body, 400, _extra("metadata"))
_refusal("messages-beta-query-refused", "`POST /v1/messages?beta=true` is refused 400: a query parameter the server "
         "does not know", lambda body, query, headers: "beta" in query, 400, "beta: Unknown query parameter",
         "servers that validate the query string against the parameters they know; Claude Code adds `?beta=true` to "
         "every request")
_refusal("messages-beta-header-refused",
         "a request with an `anthropic-beta` header is refused 400 \"invalid beta flag\"",
         lambda body, query, headers: "anthropic-beta" in headers, 400, "invalid beta flag",
         "LiteLLM (BerriAI/litellm #20021, \"invalid beta flag\"): every request of Claude Code's refused for its "
         "flags")
_refusal("messages-tool-result-image-refused", "a `tool_result` holding an image block is refused 400",
         lambda body, query, headers: any(block.get("type") == "image" for block in _in_tool_results(body)), 400,
         "tool_result content: Input should be a valid string or a list of text blocks",
         "LM Studio (lmstudio-bug-tracker #1590): Claude Code gets a 400 when one of its tools reads an image")
_refusal("messages-cache-control-refused", "a request with `cache_control` on a block is refused 400",
         lambda body, query, headers: any("cache_control" in block
                                          for block in [*_blocks(body), *_in_tool_results(body)]),
         400, _extra("cache_control"))
ADAPTIVE_THINKING_IGNORED = flag(
    "messages-adaptive-thinking-ignored", api="messages",
    summary='`thinking: {"type": "adaptive"}` is accepted and read as thinking off: no thinking block',
    seen_in="servers that turn thinking on for `enabled` only; Claude Code asks for adaptive thinking for any model "
            "id it does not know")


def refused_field(body: dict[str, Any], query: Mapping[str, str], headers: Mapping[str, str],
                  faults: frozenset[str]) -> tuple[str, int] | None:
    """The refusal (its words, its status) of the first field refusal among `faults` whose field the request has."""
    for name, (carries, status, message) in FIELD_REFUSALS.items():
        if name in faults and carries(body, query, headers):
            return message, status
    return None
