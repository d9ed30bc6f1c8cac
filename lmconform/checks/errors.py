"""Invalid requests: refused as the client's fault, with a body a client can show."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lmconform.checks.observed import Observed
from lmconform.checks.refs import LMSTUDIO_TOOL_CHOICE, OPENAI_CHAT_CREATE, OPENAI_ERRORS
from lmconform.checks.registry import check
from lmconform.checks.scope import (
    context_overflow,
    invalid_request,
    may_be_refused,
    refusal_advised,
    refusal_level,
    refusal_required,
)
from lmconform.vocabulary import Failure, Level, NotApplicable, Note


@check("errors.status.client_error_for_invalid_request", level=Level.MUST, applies=refusal_required, ref=OPENAI_ERRORS,
       title="an invalid request gets a 4xx, never a 5xx or a 2xx", proven_by=("unknown-route-200",))
def client_error_for_invalid_request(observed: Observed) -> Iterator[Failure]:
    yield from _refused(observed)


@check("errors.status.client_error_for_value_out_of_spec", level=Level.SHOULD, applies=refusal_advised,
       ref=OPENAI_CHAT_CREATE, proven_by=("bounds-ignored",),
       title="a request with a value the spec rules out (out of its range or enumeration, off its pattern, too many "
             "items) gets a 4xx")
def client_error_for_value_out_of_spec(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the server answers something else than the client asked (temperature 5 sampled as something, max_tokens
    # -1 unbounded, 0 one token) instead of saying so; the client still gets an answer it can read. llama.cpp and LM
    # Studio accept such values on purpose, and the schemas grade these constraints SHOULD (docs/schemas.md).
    yield from _refused(observed)


def _refused(observed: Observed) -> Iterator[Failure]:
    status = observed.exchange.status or 0
    if not 400 <= status < 500:
        yield Failure("HTTP 4xx", f"HTTP {status}", observed.exchange.body_excerpt())


def _accepted_leniently(observed: Observed) -> bool:
    """An answer to a request a server should (not must) refuse that was not refused: the status check reports it at
    its level, and there is no error body to judge."""
    return refusal_level(observed.case) is not Level.MUST and (observed.exchange.status or 0) < 400


@check("errors.body.has_error_message", level=Level.MUST, applies=invalid_request, ref=LMSTUDIO_TOOL_CHOICE,
       title="an error body is JSON with `error` as a message string or an object with `message`",
       proven_by=("unknown-role-accepted",))
def has_error_message(observed: Observed) -> Iterator[Failure | Note]:
    # Both forms are in the wild: OpenAI's {"error": {"message": ...}} and LM Studio's bare {"error": "..."}.
    if _accepted_leniently(observed):
        raise NotApplicable("accepted: errors.status.client_error_for_value_out_of_spec reports it")
    body = observed.exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str) and error.strip():
        yield Note("LM Studio's bare-string form; clients reading error.message get nothing")
    elif isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"].strip():
        yield Note("OpenAI's error object")
    else:
        yield Failure('{"error": {"message": "…"}} or {"error": "…"}',
                      f"{observed.exchange.content_type or 'untyped'} body", observed.exchange.body_excerpt())


@check("errors.status.not_server_error", level=Level.SHOULD, applies=may_be_refused, ref=OPENAI_ERRORS,
       title="a request a server may refuse (an unsupported option, a prompt longer than the context) is never "
             "answered 5xx",
       proven_by=("context-overflow-500", "reasoning-effort-500", "responses-reasoning-effort-500", "messages-thinking-500"))
def not_server_error(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a 5xx says the server failed, so clients (the openai SDKs among them) retry the same request and
    # users report a crash; a 4xx says what to change. Both end in an error, so clients cope.
    status = observed.exchange.status or 0
    if status >= 500:
        yield Failure("a 2xx answer or a 4xx refusal", f"HTTP {status}", observed.exchange.body_excerpt())


@check("errors.body.openai_error_object", level=Level.SHOULD, applies=invalid_request, ref=OPENAI_ERRORS,
       title='an error body is OpenAI\'s object `{"error": {"message": …}}`, or the form the profile documents for '
             "the endpoint", proven_by=("responses-error-string",))
def openai_error_object(observed: Observed) -> Iterator[Failure | Note]:
    # SHOULD: clients that read error.message (Zed, Cline) show nothing useful for a bare string, and the openai
    # SDKs show the whole body instead; everyone still sees an error. LM Studio's chat completions answer with a
    # bare string, its Responses API with the object: --profile lmstudio holds each endpoint to its own form.
    body = observed.exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return
    if not isinstance(error, str):
        raise NotApplicable("no error message at all: errors.body.has_error_message reports it")
    documented = observed.target.profile_spec.error_shape(observed.case.api)
    if documented == "string":
        yield Note(f"a bare-string error, as {observed.target.profile_spec} documents for this endpoint")
    else:
        yield Failure('{"error": {"message": "…", "type": …, "code": …}}', '{"error": "<a bare string>"}',
                      observed.exchange.body_excerpt())


# How the agents' own readers tell an overflow from any other refusal (opencode's, pi-ai's, Claude Code's "prompt is
# too long"): OpenAI's code and words, Anthropic's, llama.cpp's ("exceeds the available context size") and LM Studio's
# ("context length of only N tokens"). An agent that reads one compacts its history and goes on; any other error
# stops it.
OVERFLOW_WORDS = re.compile(
    r"context[_ ]length[_ ]exceeded|prompt is too long|maximum context length|exceeds? the (available )?context "
    r"(window|size)|context length of only|greater than the context length|reduce the length of the messages",
    re.IGNORECASE)


def _error_said(body: Any) -> str | None:
    """An error body's message and code, in OpenAI's or Anthropic's object or LM Studio's bare string; None for a
    body that is no such error (`{"detail": …}`, plain text)."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return " ".join(str(error[key]) for key in ("message", "code", "type") if error.get(key))
    return None


@check("errors.context_overflow.refused_as_overflow", level=Level.MUST, applies=context_overflow, ref=OPENAI_ERRORS,
       title="a prompt longer than the context is refused with a 4xx whose error, in the API's shape, says so in "
             "words agents read as an overflow (`context_length_exceeded`, `prompt is too long`)",
       proven_by=("context-overflow-500", "context-overflow-detail", "context-overflow-as-text",
                  "context-overflow-stream-cut"))
def refused_as_overflow(observed: Observed) -> Iterator[Failure]:
    # MUST: an agent compacts its history on an overflow it recognises and goes on; on a 200 whose text is the error,
    # a 5xx, a stream cut without an error or an error it cannot read, it stops or asks again until its limit.
    exchange = observed.exchange
    status = exchange.status or 0
    expected = "HTTP 4xx with an error saying the prompt overflowed the context"
    if status < 400:
        generation = observed.generation
        if observed.case.streamed and generation.end is None:
            yield Failure(expected, f"HTTP {status}, and a stream that ends without an error or an end",
                          exchange.body_excerpt(300))
        else:
            yield Failure(expected, f"HTTP {status} answering {generation.text()[:160]!r}", exchange.body_excerpt(300))
        return
    said = _error_said(exchange.json)
    if status >= 500 or said is None:
        yield Failure(expected, f"HTTP {status}, {exchange.content_type or 'untyped'} body with no error object",
                      exchange.body_excerpt(300))
    elif not OVERFLOW_WORDS.search(said):
        yield Failure(f"{expected} (context_length_exceeded, prompt is too long…)", f"HTTP {status}: {said[:200]}",
                      exchange.body_excerpt(300))
