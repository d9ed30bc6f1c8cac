"""What a Messages server does with what it was asked: `tool_choice` honoured, a `tool_result` turn answered,
`max_tokens` required, and refusals in Anthropic's error shape."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.messages.checks.scope import (
    messages_parallel_disabled,
    messages_refusable,
    messages_tool_choice_is,
    messages_tool_result_turn,
    messages_without_max_tokens,
)
from lmconform.apis.messages.checks.views import final_message
from lmconform.checks.observed import Observed
from lmconform.checks.refs import ANTHROPIC_ERRORS, ANTHROPIC_MESSAGES, ANTHROPIC_TOOL_USE
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable

# Anthropic's error types (its errors page); the list may grow, so an unknown type is reported, not refused.
ERROR_TYPES = ("invalid_request_error", "authentication_error", "billing_error", "permission_error",
               "not_found_error", "request_too_large", "rate_limit_error", "timeout_error", "api_error",
               "overloaded_error")


def _tool_uses(observed: Observed) -> list[object]:
    """The name of each tool_use block of the answer, as the block gives it (None when it gives none)."""
    observed.require_success()
    content = final_message(observed).get("content")
    return [block.get("name") for block in content if isinstance(block, dict) and block.get("type") == "tool_use"] \
        if isinstance(content, list) else []


@check("messages.tool_choice.any_calls_a_tool", level=Level.MUST, applies=messages_tool_choice_is("any"),
       ref=ANTHROPIC_TOOL_USE, title='`tool_choice` `{"type": "any"}` gets a tool_use block',
       proven_by=("messages-any-read-as-auto",))
def any_calls_a_tool(observed: Observed) -> Iterator[Failure]:
    if not _tool_uses(observed):
        yield Failure("a tool_use block", "none", observed.exchange.body_excerpt(300))


@check("messages.tool_choice.tool_calls_the_named_tool", level=Level.MUST, applies=messages_tool_choice_is("tool"),
       ref=ANTHROPIC_TOOL_USE, title='`tool_choice` `{"type": "tool", "name"}` gets a call of that tool',
       proven_by=("messages-named-tool-not-enforced",))
def tool_calls_the_named_tool(observed: Observed) -> Iterator[Failure]:
    named = observed.case.tool_choice.get("name")
    called = _tool_uses(observed)
    if not called or any(name != named for name in called):
        yield Failure(f"tool_use of {named!r} only", f"tool_use blocks {called}", observed.exchange.body_excerpt(300))


@check("messages.tool_choice.none_calls_no_tool", level=Level.MUST, applies=messages_tool_choice_is("none"),
       ref=ANTHROPIC_TOOL_USE, title='`tool_choice` `{"type": "none"}` gets no tool_use block',
       proven_by=("messages-tool-choice-none-dropped",))
def none_calls_no_tool(observed: Observed) -> Iterator[Failure]:
    called = _tool_uses(observed)
    if called:
        yield Failure("no tool_use block", f"tool_use blocks {called}", observed.exchange.body_excerpt(300))


@check("messages.tool_choice.parallel_disabled_one_call", level=Level.MUST, applies=messages_parallel_disabled,
       ref=ANTHROPIC_TOOL_USE, title="`disable_parallel_tool_use: true` gets at most one tool_use block",
       proven_by=("messages-parallel-not-disabled",))
def parallel_disabled_one_call(observed: Observed) -> Iterator[Failure]:
    # MUST: a client that asked for one call at a time answers one; a second call waits forever for its result.
    called = _tool_uses(observed)
    if len(called) > 1:
        yield Failure("at most one tool_use block", f"{len(called)}: {called}", observed.exchange.body_excerpt(300))


@check("messages.tool_result.turn_answered", level=Level.MUST, applies=messages_tool_result_turn,
       ref=ANTHROPIC_TOOL_USE, title="a user turn of `tool_result` blocks is answered 2xx with a message",
       proven_by=("messages-tool-result-500",))
def tool_result_turn_answered(observed: Observed) -> Iterator[Failure]:
    # MUST: this is the second half of every tool call an agent makes.
    observed.require_success()
    for turn in observed.case.turns:
        if not turn.answers_call_of:
            continue
        exchange = observed.answer_to(turn.name)
        if exchange.status is None or not 200 <= exchange.status < 300:
            yield Failure("HTTP 2xx", f"HTTP {exchange.status}", exchange.body_excerpt(300))


@check("messages.request.max_tokens_required", level=Level.SHOULD, applies=messages_without_max_tokens,
       ref=ANTHROPIC_MESSAGES, title="a request without `max_tokens` is refused with a 4xx",
       proven_by=("messages-max-tokens-defaulted",))
def max_tokens_required(observed: Observed) -> Iterator[Failure]:
    # SHOULD: Anthropic's API requires it and its SDKs always send it; a server that picks a default answers
    # requests no Anthropic client would make (and a 5xx would blame itself for the client's mistake).
    status = observed.exchange.status or 0
    if not 400 <= status < 500:
        yield Failure("HTTP 4xx", f"HTTP {status}", observed.exchange.body_excerpt(300))


@check("messages.error.anthropic_shape", level=Level.SHOULD, applies=messages_refusable, ref=ANTHROPIC_ERRORS,
       title='an error is `{"type": "error", "error": {"type", "message"}}` with one of Anthropic\'s types',
       proven_by=("messages-error-openai-shape",))
def anthropic_shape(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the SDKs raise on the status whatever the body; Claude Code and other clients show error.message
    # and branch on error.type (overloaded_error is retried).
    exchange = observed.exchange
    if exchange.status is None or exchange.status < 400:
        raise NotApplicable(f"the request was answered HTTP {exchange.status}")
    body = exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(body, dict) or body.get("type") != "error" or not isinstance(error, dict) \
            or not isinstance(error.get("message"), str) or error.get("type") not in ERROR_TYPES:
        yield Failure('{"type": "error", "error": {"type": "invalid_request_error", "message": "…"}}',
                      f"{exchange.content_type or 'untyped'} body", exchange.body_excerpt(300))
