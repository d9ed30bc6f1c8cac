"""Client verdicts on chat completions streams: the captured bytes replayed through Void's stream reader and the
openai Python SDK's `chat.completions.stream()`, judged by what their users would see."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lmconform.apis.chat.checks.scope import chat_streamed
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    OPENAI_PYTHON_STREAM_HELPER,
    VOID_PARSER,
)
from lmconform.checks.registry import check
from lmconform.clients.void import VoidOutcome, void_read
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, shown
from lmconform.wire.http import HttpExchange

if TYPE_CHECKING:
    from lmconform.clients.openai_python import SdkOutcome

LENGTH_LIMIT = "LengthFinishReasonError"


# One replay per client and answer, however many of the client's checks read it.
def _void_replay(exchange: HttpExchange) -> VoidOutcome:
    return void_read(exchange)


def _sdk_chat_replay(exchange: HttpExchange) -> SdkOutcome:
    from lmconform.clients.openai_python import replay_chat_stream  # loaded by the first replay: see load_sdks

    body = exchange.request.body
    assert isinstance(body, dict), "the checks that replay a stream judge streamed cases, whose body is an object"
    return replay_chat_stream(body, exchange)


def _void(observed: Observed) -> VoidOutcome:
    observed.require_success()
    return observed.exchange.view(_void_replay)


def _sdk(observed: Observed) -> SdkOutcome:
    observed.require_success()
    return observed.exchange.view(_sdk_chat_replay)


@check("client.void.no_error", level=Level.MUST, kind="client", applies=chat_streamed, ref=VOID_PARSER,
       title="Void shows the answer, not an error", proven_by=("content-as-reasoning",))
def void_no_error(observed: Observed) -> Iterator[Failure | Note]:
    outcome = _void(observed)
    if outcome.error and observed.generation.refused:
        # The model declined, in the member OpenAI gives a refusal; Void reads only the content: no server can help.
        yield Note(f"the model refused in `refusal`, which Void does not read: it shows {shown(outcome.error)}")
    elif outcome.error:
        yield Failure("no error in Void", f"Void shows the error {shown(outcome.error)}",
                      observed.exchange.body_excerpt(300))


@check("client.void.tool_call_parsed", level=Level.MUST, kind="client", applies=chat_streamed, ref=VOID_PARSER,
       title="Void reads the first tool call with the name and arguments that were sent",
       proven_by=("arguments-invalid-json",))
def void_tool_call_parsed(observed: Observed) -> Iterator[Failure]:
    meant = observed.require_tool_calls()[0]
    outcome = _void(observed)
    arguments, error = meant.parsed_arguments()
    if outcome.tool_name != meant.name:
        yield Failure(f"tool name {meant.name!r}", f"Void reads {shown(outcome.tool_name)}", str(meant.started.source))
    if outcome.tool_params is None:
        yield Failure("arguments Void can parse to an object", f"Void cannot parse {outcome.tool_params_str[:200]!r}",
                      str(meant.started.source))
    elif error is None and outcome.tool_params != arguments:
        yield Failure(f"arguments {json.dumps(arguments)[:200]}", f"Void reads {json.dumps(outcome.tool_params)[:200]}",
                      str(meant.started.source))


@check("client.openai_python.stream_helper", level=Level.MUST, kind="client", applies=chat_streamed, ref=OPENAI_PYTHON_STREAM_HELPER,
       title="the openai SDK's `chat.completions.stream()` reads the stream without raising",
       proven_by=("invalid-utf8",))
def sdk_stream_helper(observed: Observed) -> Iterator[Failure | Note]:
    outcome = _sdk(observed)
    if outcome.raised and outcome.raised.startswith(LENGTH_LIMIT):
        # The helper raises this by design for every answer cut at max_tokens: the stream itself was fine.
        yield Note(f"the SDK raised {outcome.raised[:120]}, as it does for any answer cut by max_tokens")
    elif outcome.raised:
        yield Failure(f"openai {outcome.sdk_version} reads the stream", f"it raises {outcome.raised}",
                      observed.exchange.body_excerpt(300))


@check("client.openai_python.matches_stream", level=Level.MUST, kind="client", applies=chat_streamed, ref=OPENAI_PYTHON_STREAM_HELPER,
       title="the openai SDK's accumulated text and tool calls equal what the stream sent",
       proven_by=("two-calls-one-index",))
def sdk_matches_stream(observed: Observed) -> Iterator[Failure]:
    outcome = _sdk(observed)
    if outcome.raised:
        raise NotApplicable("the SDK raised; client.openai_python.stream_helper reports it")
    generation = observed.generation
    if outcome.text != generation.text():
        yield Failure(f"text {generation.text()[:120]!r}", f"the SDK shows {outcome.text[:120]!r}")
    sent = generation.tool_calls()
    if len(outcome.tool_calls) != len(sent):
        yield Failure(f"{len(sent)} tool calls: {', '.join(shown(c.name) for c in sent) or 'none'}",
                      f"the SDK shows {len(outcome.tool_calls)}: "
                      f"{', '.join(shown(c.name) for c in outcome.tool_calls) or 'none'}",
                      str(sent[-1].started.source) if sent else "")
        return
    for meant, seen in zip(sent, outcome.tool_calls):
        if seen.name != meant.name:
            yield Failure(f"tool name {meant.name!r}", f"the SDK shows {shown(seen.name)}", str(meant.started.source))
        if (seen.arguments or "") != meant.arguments_text:
            # The SDK does not type-check what it accumulates: arguments sent as an object come back as a dict.
            yield Failure(f"arguments {meant.arguments_text[:120]!r}", f"the SDK shows {shown(seen.arguments)}"[:200],
                          str(meant.started.source))


