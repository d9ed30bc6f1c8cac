"""Differential checks (--upstream): a proxy's answer against the upstream's answer to the same request.

What a proxy may legitimately rewrite (ids, `created`, `model`, key order, null keys) is ignored; what a client
would see differently is reported. Comparing two generations needs a deterministic upstream: the reference
server, or a real model at temperature 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.checks.observed import Observed, generation_of
from lmconform.checks.refs import OPENAI_CHAT_STREAMING, OPENAI_ERRORS, OPENAI_RESPONSES_STREAMING
from lmconform.checks.registry import check
from lmconform.checks.scope import generates, over_http, streamed
from lmconform.normalize.events import Generation
from lmconform.vocabulary import Failure, Level, NotApplicable, Requirement
from lmconform.wire.http import HttpExchange

UPSTREAM = (Requirement.UPSTREAM,)


def _status_class(exchange: HttpExchange) -> str:
    return f"{exchange.status // 100}xx" if exchange.status else f"no answer ({exchange.error_kind})"


@check("proxy.diff.status_preserved", level=Level.MUST, applies=over_http, requires=UPSTREAM, kind="differential", ref=OPENAI_ERRORS,
       title="the proxy answers with the upstream's status class", proven_by=("server-error-on-bad-input",))
def status_preserved(observed: Observed) -> Iterator[Failure]:
    proxy, upstream = observed.exchange, observed.upstream
    if _status_class(proxy) != _status_class(upstream):
        yield Failure(f"HTTP {upstream.status} (as the upstream)", f"HTTP {proxy.status}", proxy.body_excerpt(300))


def _client_view(generation: Generation) -> dict[str, Any]:
    """What a client makes of a generation, without the ids a proxy may rewrite."""
    calls = []
    for call in generation.tool_calls():
        arguments, error = call.parsed_arguments()
        calls.append({"name": call.name, "arguments": call.arguments_text if error else arguments})
    end = generation.end
    return {"text": generation.text(), "reasoning": generation.text("reasoning"), "tool_calls": calls,
            "finish": end.finish_reason if end else None}


@check("proxy.diff.generation_preserved", level=Level.MUST, applies=generates, requires=UPSTREAM, kind="differential",
       ref=OPENAI_CHAT_STREAMING, title="text, tool calls and finish reason reach the client as the upstream sent them",
       proven_by=("arguments-invalid-json", "finish-stop-after-tools", "no-response-completed",
                  "messages-end-turn-after-tool-use"))
def generation_preserved(observed: Observed) -> Iterator[Failure]:
    proxy, upstream = observed.exchange, observed.upstream
    if not (observed.succeeded and upstream.status and 200 <= upstream.status < 300):
        raise NotApplicable("one side did not answer 2xx; proxy.diff.status_preserved speaks to that")
    seen = _client_view(observed.generation)
    sent = _client_view(generation_of(observed.case.api, upstream))
    for key in sent:
        if seen[key] != sent[key]:
            yield Failure(f"{key}: {json.dumps(sent[key], ensure_ascii=False)[:200]} (upstream)",
                          f"{key}: {json.dumps(seen[key], ensure_ascii=False)[:200]}", proxy.body_excerpt(300))


def _framing(exchange: HttpExchange) -> dict[str, Any]:
    events = exchange.sse.events if exchange.is_event_stream else []
    return {
        "content type": exchange.content_type,
        "data: [DONE]": any(event.data.strip() == "[DONE]" for event in events),
        "event: lines": any(line.startswith(b"event:") for event in events for line in event.raw.splitlines()),
    }


def require_both_streams(observed: Observed) -> None:
    """Streams are compared only when the proxy and its upstream both answered one."""
    if not (observed.succeeded and observed.upstream.status == 200):
        raise NotApplicable("one side did not answer 200")


@check("proxy.diff.framing_preserved", level=Level.INFO, applies=streamed, requires=UPSTREAM, kind="differential",
       ref=OPENAI_RESPONSES_STREAMING, title="the stream keeps the upstream's framing ([DONE], event: lines)",
       proven_by=("no-done",))
def framing_preserved(observed: Observed) -> Iterator[Failure]:
    # INFO: re-framing is allowed (LiteLLM drops event: lines and appends [DONE] on /v1/responses), but clients that
    # dispatch on event: or wait for [DONE] notice, so the difference is reported.
    require_both_streams(observed)
    seen, sent = _framing(observed.exchange), _framing(observed.upstream)
    for key in sent:
        if seen[key] != sent[key]:
            yield Failure(f"{key}: {sent[key]} (upstream)", f"{key}: {seen[key]}", observed.exchange.body_excerpt(200))


def _error_shape(exchange: HttpExchange) -> dict[str, Any]:
    body = exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return {"form": "object", **{key: error.get(key) for key in ("type", "code", "param")}}
    return {"form": "bare string" if isinstance(error, str) else f"no error field ({exchange.content_type})"}


@check("proxy.diff.error_body_preserved", level=Level.SHOULD, applies=over_http, requires=UPSTREAM, kind="differential",
       ref=OPENAI_ERRORS, title="an upstream error reaches the client with its type, code and param",
       proven_by=("server-error-on-bad-input",))
def error_body_preserved(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients branch on error.code (previous_response_not_found) and show error.param; a re-wrapped error
    # ("400" as a string, param lost) still reads as an error.
    upstream = observed.upstream
    if not upstream.status or upstream.status < 400:
        raise NotApplicable("the upstream answered without an error")
    seen, sent = _error_shape(observed.exchange), _error_shape(upstream)
    if seen != sent:
        yield Failure(json.dumps(sent), json.dumps(seen), observed.exchange.body_excerpt(300))
