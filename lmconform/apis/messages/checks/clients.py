"""Client verdicts on Messages streams: the captured bytes replayed through the anthropic Python SDK's
`messages.stream()`, judged by what its users would see."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from lmconform.apis.messages.checks.scope import messages_streamed
from lmconform.checks.observed import Observed
from lmconform.checks.refs import ANTHROPIC_PYTHON_STREAM_HELPER
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, shown
from lmconform.wire.http import HttpExchange

if TYPE_CHECKING:
    from lmconform.clients.anthropic_python import SdkMessage


def _anthropic_replay(exchange: HttpExchange) -> SdkMessage:
    from lmconform.clients.anthropic_python import replay_messages_stream  # see lmconform.clients.load_sdks

    return replay_messages_stream(exchange.request.body, exchange)


def _anthropic(observed: Observed) -> SdkMessage:
    observed.require_success()
    return observed.exchange.view(_anthropic_replay)


@check("client.anthropic_python.stream_helper", level=Level.MUST, kind="client", applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER,
       title="the anthropic SDK's `messages.stream()` reads the stream to its final message without raising",
       proven_by=("messages-no-message-start",))
def anthropic_stream_helper(observed: Observed) -> Iterator[Failure]:
    outcome = _anthropic(observed)
    if outcome.raised:
        yield Failure(f"anthropic {outcome.sdk_version} reads the stream", f"it raises {outcome.raised}",
                      observed.exchange.body_excerpt(300))


@check("client.anthropic_python.matches_stream", level=Level.MUST, kind="client", applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER,
       title="the anthropic SDK's final message holds the text, thinking and tool calls the stream sent",
       proven_by=("messages-delta-type-mismatch",))
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
