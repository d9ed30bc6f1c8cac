"""The routes beside `/v1/messages` that Claude Code calls: `POST /v1/messages/count_tokens`, which it asks before
each request to decide when to compact its history."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.messages.checks.scope import COUNT_TOKENS_PATH, messages_counted
from lmconform.apis.messages.checks.views import final_message
from lmconform.checks.observed import Observed
from lmconform.checks.refs import ANTHROPIC_COUNT_TOKENS
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable


@check("messages.count_tokens.covers_input", level=Level.SHOULD, applies=messages_counted, ref=ANTHROPIC_COUNT_TOKENS,
       title="`POST /v1/messages/count_tokens` counts no fewer `input_tokens` than the same request is answered "
             "with, or is refused 404 in Anthropic's error shape",
       proven_by=("messages-count-tokens-under", "messages-count-tokens-missing"))
def count_covers_input(observed: Observed) -> Iterator[Failure]:
    # SHOULD: without the route Claude Code estimates the count itself and goes on, if the refusal reads as one;
    # a count below the prompt's makes it compact too late, and the next request overflows the context.
    played = next(played for played in observed.turns.values() if played.turn.path == COUNT_TOKENS_PATH)
    counted = observed.answer_to(played.turn.name)
    observed.require_success()
    usage = final_message(observed).get("usage")
    answered = usage.get("input_tokens") if isinstance(usage, dict) else None
    body = counted.json
    if counted.status == 404:
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(body, dict) or body.get("type") != "error" or not isinstance(error, dict) \
                or not isinstance(error.get("message"), str):
            yield Failure('HTTP 404 {"type": "error", "error": {"type": "not_found_error", "message": "…"}}',
                          f"HTTP 404, {counted.content_type or 'untyped'} body", counted.body_excerpt(300))
        return
    count = body.get("input_tokens") if isinstance(body, dict) and counted.status == 200 else None
    if not isinstance(count, int) or isinstance(count, bool):
        yield Failure('HTTP 200 {"input_tokens": N}, or a 404 in Anthropic\'s error shape',
                      f"HTTP {counted.status}", counted.body_excerpt(300))
    elif not isinstance(answered, int):
        raise NotApplicable("the message says no input_tokens to compare with")
    elif count < answered:
        yield Failure(f"input_tokens of at least {answered}, as the message was answered with",
                      f"input_tokens {count}", counted.body_excerpt(300))
