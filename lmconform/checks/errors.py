"""Invalid requests: refused as the client's fault, with a body a client can show."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.checks.observed import Observed
from lmconform.checks.refs import LMSTUDIO_TOOL_CHOICE, OPENAI_ERRORS
from lmconform.checks.registry import check
from lmconform.checks.scope import invalid_request
from lmconform.vocabulary import Failure, Level, Note


@check("errors.status.client_error_for_invalid_request", level=Level.MUST, applies=invalid_request, ref=OPENAI_ERRORS,
       title="an invalid request gets a 4xx, never a 5xx or a 2xx")
def client_error_for_invalid_request(observed: Observed) -> Iterator[Failure]:
    status = observed.exchange.status or 0
    if not 400 <= status < 500:
        yield Failure("HTTP 4xx", f"HTTP {status}", observed.exchange.body_excerpt())


@check("errors.body.has_error_message", level=Level.MUST, applies=invalid_request, ref=LMSTUDIO_TOOL_CHOICE,
       title="an error body is JSON with `error` as a message string or an object with `message`")
def has_error_message(observed: Observed) -> Iterator[Failure | Note]:
    # Both forms are in the wild: OpenAI's {"error": {"message": ...}} and LM Studio's bare {"error": "..."}.
    body = observed.exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str) and error.strip():
        yield Note("LM Studio's bare-string form; clients reading error.message get nothing")
    elif isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"].strip():
        yield Note("OpenAI's error object")
    else:
        yield Failure('{"error": {"message": "…"}} or {"error": "…"}',
                      f"{observed.exchange.content_type or 'untyped'} body", observed.exchange.body_excerpt())
