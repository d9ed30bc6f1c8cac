"""Client verdicts: the captured bytes replayed through real clients, judged by what their users would see."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    ANTHROPIC_PYTHON_STREAM_HELPER,
    OPENAI_PYTHON_RESPONSES_HELPER,
    OPENAI_PYTHON_STREAM_HELPER,
    VOID_PARSER,
)
from lmconform.checks.registry import check
from lmconform.checks.scope import chat_streamed, messages_streamed, responses_streamed
from lmconform.clients.void import VoidOutcome, void_read
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, shown
from lmconform.wire.http import HttpExchange

if TYPE_CHECKING:
    from lmconform.clients.anthropic_python import SdkMessage
    from lmconform.clients.openai_python import SdkOutcome, SdkResponsesOutcome

LENGTH_LIMIT = "LengthFinishReasonError"
NO_COMPLETED = "Didn't receive a `response.completed` event"


# One replay per client and answer, however many of the client's checks read it. The SDKs are loaded by the first
# replay, not with the registry: importing both takes longer than the rest of lmconform together (1.7 s of 2.4),
# and a run without client checks, a collection or a usage error never needs them.
def load_sdks() -> None:
    """Import the SDKs the client checks replay through, for a run that will: before it starts, so that they are
    among what the process holds for good (lmconform.wire.collector.freeze_long_lived)."""
    import lmconform.clients.anthropic_python  # noqa: F401
    import lmconform.clients.openai_python  # noqa: F401


def _void_replay(exchange: HttpExchange) -> VoidOutcome:
    return void_read(exchange)


def _sdk_chat_replay(exchange: HttpExchange) -> SdkOutcome:
    from lmconform.clients.openai_python import replay_chat_stream

    return replay_chat_stream(exchange.request.body, exchange)


def _sdk_responses_replay(exchange: HttpExchange) -> SdkResponsesOutcome:
    from lmconform.clients.openai_python import replay_responses_stream

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
        yield Failure("no error in Void", f"Void shows the error {shown(outcome.error)}",
                      observed.exchange.body_excerpt(300))


@check("client.void.tool_call_parsed", level=Level.MUST, kind="client", applies=chat_streamed, ref=VOID_PARSER,
       title="Void reads the first tool call with the name and arguments that were sent")
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


def _calls(calls: list[tuple[str, str | None]]) -> str:
    """Function calls as a reader writes them: `calculate({"expression": "2+2"})`, or `none`."""
    return ", ".join(f"{name}({arguments if arguments is not None else ''})" for name, arguments in calls) or "none"


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
    seen = [(call.name, call.arguments) for call in outcome.function_calls]
    meant = [(call.name, call.arguments_text) for call in sent]
    if seen != meant:
        yield Failure(f"function calls {_calls(meant)}"[:200], f"the SDK shows {_calls(seen)}"[:200],
                      str(sent[0].started.source) if sent else "")


def _anthropic_replay(exchange: HttpExchange) -> SdkMessage:
    from lmconform.clients.anthropic_python import replay_messages_stream

    return replay_messages_stream(exchange.request.body, exchange)


def _anthropic(observed: Observed) -> SdkMessage:
    observed.require_success()
    return observed.exchange.view(_anthropic_replay)


@check("client.anthropic_python.stream_helper", level=Level.MUST, kind="client", applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER,
       title="the anthropic SDK's `messages.stream()` reads the stream to its final message without raising")
def anthropic_stream_helper(observed: Observed) -> Iterator[Failure]:
    outcome = _anthropic(observed)
    if outcome.raised:
        yield Failure(f"anthropic {outcome.sdk_version} reads the stream", f"it raises {outcome.raised}",
                      observed.exchange.body_excerpt(300))


@check("client.anthropic_python.matches_stream", level=Level.MUST, kind="client", applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER,
       title="the anthropic SDK's final message holds the text, thinking and tool calls the stream sent")
def anthropic_matches_stream(observed: Observed) -> Iterator[Failure]:
    # The SDK drops a delta its block cannot take and files deltas by index: what it shows can differ from what
    # was sent without any error.
    outcome = _anthropic(observed)
    if outcome.raised:
        raise NotApplicable("the SDK raised; client.anthropic_python.stream_helper reports it")
    generation = observed.generation
    for channel, seen in (("content", outcome.text), ("reasoning", outcome.thinking)):
        if seen != generation.text(channel):
            yield Failure(f"{channel} {shown(generation.text(channel)[:120])}", f"the SDK shows {shown(seen[:120])}")
    sent = generation.tool_calls()
    meant = []
    for call in sent:
        arguments, error = call.parsed_arguments()
        meant.append((call.name, call.arguments_text if error else arguments))
    shown_calls = [(use.name, use.input if use.input is not None else {}) for use in outcome.tool_uses]
    if shown_calls != meant:
        yield Failure(f"tool calls {meant}"[:200], f"the SDK shows {shown_calls}"[:200],
                      str(sent[0].started.source) if sent else "")
