"""Client verdicts: the captured bytes replayed through real clients, judged by what their users would see."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_PYTHON_RESPONSES_HELPER, OPENAI_PYTHON_STREAM_HELPER, VOID_PARSER
from lmconform.checks.registry import check
from lmconform.checks.scope import chat_streamed, responses_streamed
from lmconform.clients.openai_python import SdkOutcome, SdkResponsesOutcome, replay_chat_stream, replay_responses_stream
from lmconform.clients.void import VoidOutcome, void_read
from lmconform.vocabulary import Failure, Level, NotApplicable, Note
from lmconform.wire.http import HttpExchange

LENGTH_LIMIT = "LengthFinishReasonError"
NO_COMPLETED = "Didn't receive a `response.completed` event"


# One replay per client and answer, however many of the client's checks read it.
def _void_replay(exchange: HttpExchange) -> VoidOutcome:
    return void_read(exchange)


def _sdk_chat_replay(exchange: HttpExchange) -> SdkOutcome:
    return replay_chat_stream(exchange.request.body, exchange)


def _sdk_responses_replay(exchange: HttpExchange) -> SdkResponsesOutcome:
    return replay_responses_stream(exchange.request.body, exchange)


def _void(observed: Observed) -> VoidOutcome:
    observed.require_success()
    return observed.exchange.view(_void_replay)


def _sdk(observed: Observed) -> SdkOutcome:
    observed.require_success()
    return observed.exchange.view(_sdk_chat_replay)


@check("client.void.no_error", level=Level.MUST, kind="client", applies=chat_streamed, ref=VOID_PARSER,
       title="Void shows the answer, not an error")
def void_no_error(observed: Observed) -> Iterator[Failure]:
    outcome = _void(observed)
    if outcome.error:
        yield Failure("no error in Void", repr(outcome.error), observed.exchange.body_excerpt(300))


@check("client.void.tool_call_parsed", level=Level.MUST, kind="client", applies=chat_streamed, ref=VOID_PARSER,
       title="Void reads the first tool call with the name and arguments that were sent")
def void_tool_call_parsed(observed: Observed) -> Iterator[Failure]:
    meant = observed.require_tool_calls()[0]
    outcome = _void(observed)
    arguments, error = meant.parsed_arguments()
    if outcome.tool_name != meant.name:
        yield Failure(f"tool name {meant.name!r}", f"Void reads {outcome.tool_name!r}", str(meant.started.source))
    if outcome.tool_params is None:
        yield Failure("arguments Void can parse to an object", f"Void cannot parse {outcome.tool_params_str[:200]!r}",
                      str(meant.started.source))
    elif error is None and outcome.tool_params != arguments:
        yield Failure(f"arguments {json.dumps(arguments)[:200]}", f"Void reads {json.dumps(outcome.tool_params)[:200]}",
                      str(meant.started.source))


@check("client.openai_python.stream_helper", level=Level.MUST, kind="client", applies=chat_streamed, ref=OPENAI_PYTHON_STREAM_HELPER,
       title="the openai SDK's `chat.completions.stream()` reads the stream without raising")
def sdk_stream_helper(observed: Observed) -> Iterator[Failure | Note]:
    outcome = _sdk(observed)
    if outcome.raised and outcome.raised.startswith(LENGTH_LIMIT):
        # The helper raises this by design for every answer cut at max_tokens: the stream itself was fine.
        yield Note(f"the SDK raised {outcome.raised[:120]}, as it does for any answer cut by max_tokens")
    elif outcome.raised:
        yield Failure(f"openai {outcome.sdk_version} reads the stream", f"it raises {outcome.raised}",
                      observed.exchange.body_excerpt(300))


@check("client.openai_python.matches_stream", level=Level.MUST, kind="client", applies=chat_streamed, ref=OPENAI_PYTHON_STREAM_HELPER,
       title="the openai SDK's accumulated text and tool calls equal what the stream sent")
def sdk_matches_stream(observed: Observed) -> Iterator[Failure]:
    outcome = _sdk(observed)
    if outcome.raised:
        raise NotApplicable("the SDK raised; client.openai_python.stream_helper reports it")
    generation = observed.generation
    if outcome.text != generation.text():
        yield Failure(f"text {generation.text()[:120]!r}", f"the SDK shows {outcome.text[:120]!r}")
    sent = generation.tool_calls()
    if len(outcome.tool_calls) != len(sent):
        yield Failure(f"{len(sent)} tool calls {[c.name for c in sent]}",
                      f"the SDK shows {len(outcome.tool_calls)} {[c.name for c in outcome.tool_calls]}",
                      str(sent[-1].started.source) if sent else "")
        return
    for meant, shown in zip(sent, outcome.tool_calls):
        if shown.name != meant.name:
            yield Failure(f"tool name {meant.name!r}", f"the SDK shows {shown.name!r}", str(meant.started.source))
        if (shown.arguments or "") != meant.arguments_text:
            # The SDK does not type-check what it accumulates: arguments sent as an object come back as a dict.
            yield Failure(f"arguments {meant.arguments_text[:120]!r}", f"the SDK shows {shown.arguments!r}"[:200],
                          str(meant.started.source))


def _sdk_responses(observed: Observed) -> SdkResponsesOutcome:
    observed.require_success()
    return observed.exchange.view(_sdk_responses_replay)


@check("client.openai_python.responses_stream", level=Level.MUST, kind="client", applies=responses_streamed,
       ref=OPENAI_PYTHON_RESPONSES_HELPER, title="the openai SDK's `responses.stream()` reads the stream without raising")
def sdk_responses_stream(observed: Observed) -> Iterator[Failure | Note]:
    outcome = _sdk_responses(observed)
    ended = observed.responses_stream.final_response() or {}
    if outcome.raised and NO_COMPLETED in outcome.raised and ended.get("status") == "incomplete":
        # get_final_response() waits for response.completed alone: it raises so for every answer that ended
        # response.incomplete (cut at max_output_tokens), OpenAI's own included. The stream itself was fine.
        yield Note(f"the SDK raised {outcome.raised[:120]}, as it does for any incomplete response")
    elif outcome.raised:
        yield Failure(f"openai {outcome.sdk_version} reads the stream", f"it raises {outcome.raised}",
                      observed.exchange.body_excerpt(300))


@check("client.openai_python.responses_matches_stream", level=Level.MUST, kind="client", applies=responses_streamed,
       ref=OPENAI_PYTHON_RESPONSES_HELPER,
       title="the openai SDK's final response shows the function calls the stream sent")
def sdk_responses_matches_stream(observed: Observed) -> Iterator[Failure]:
    # The SDK's final response is the terminal event's object: a stream whose deltas say otherwise shows users
    # one thing while it streams and stores another.
    outcome = _sdk_responses(observed)
    if outcome.raised:
        raise NotApplicable("the SDK raised; client.openai_python.responses_stream reports it")
    sent = observed.generation.tool_calls()
    shown = [(call.name, call.arguments) for call in outcome.function_calls]
    meant = [(call.name, call.arguments_text) for call in sent]
    if shown != meant:
        yield Failure(f"function calls {meant}"[:200], f"the SDK shows {shown}"[:200],
                      str(sent[0].started.source) if sent else "")
