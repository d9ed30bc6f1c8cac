"""The anthropic SDK's verdict on Messages streams: the real SDK replayed over hand-built captures and over the
reference server's answers, clean and with the faults that break it."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.clients.anthropic_python import SdkToolUse, replay_messages_stream
from lmconform.run import Run
from lmconform.target import Target
from lmconform.vocabulary import Outcome
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

REQUEST = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Weather in Paris?"}],
           "stream": True}
START = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                              "model": "m", "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 3, "output_tokens": 0}}}
STOP = [{"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 5}}, {"type": "message_stop"}]


def tool_block(index: int = 0, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}, **extra}
    return {"type": "content_block_start", "index": index, "content_block": block}


def fragment(text: str, index: int = 0) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": text}}


def sse(*events: dict[str, Any], named: bool = True) -> list[bytes]:
    return [(f"event: {event['type']}\n" if named else "").encode() + f"data: {json.dumps(event)}\n\n".encode()
            for event in events]


def exchange(reads: list[bytes], status: int = 200, content_type: str = "text/event-stream") -> HttpExchange:
    return HttpExchange(request=HttpRequest("POST", "http://x/v1/messages", {}, REQUEST), status=status,
                        headers={"content-type": content_type},
                        chunks=[BodyChunk(0.01 * i, data) for i, data in enumerate(reads)])


PARIS = [START, tool_block(), fragment('{"location"'), fragment(': "Paris"}'),
         {"type": "content_block_stop", "index": 0}, *STOP]


def test_the_sdk_reads_a_clean_tool_stream():
    outcome = replay_messages_stream(REQUEST, exchange(sse(*PARIS)))
    assert outcome.raised is None and outcome.sdk_version == anthropic.__version__
    assert outcome.tool_uses == (SdkToolUse("toolu_1", "get_weather", {"location": "Paris"}),)
    assert outcome.stop_reason == "tool_use"


def test_the_sdk_raises_index_error_on_a_first_block_at_index_one():
    events = [START, tool_block(1), fragment('{"location": "Paris"}', 1), *STOP]
    assert replay_messages_stream(REQUEST, exchange(sse(*events))).raised == "IndexError: list index out of range"


def test_the_sdk_raises_on_cumulative_input_fragments_with_its_own_words():
    events = [START, tool_block(), fragment('{"locati'), fragment('{"location": "Rome"}'), *STOP]
    raised = replay_messages_stream(REQUEST, exchange(sse(*events))).raised
    assert raised.startswith("ValueError: Unable to parse tool parameter JSON from model.")
    assert 'JSON: {"locati{"location": "Rome"}' in raised


def test_the_sdk_reads_nothing_of_a_stream_without_event_lines():
    raised = replay_messages_stream(REQUEST, exchange(sse(*PARIS, named=False))).raised
    assert raised.startswith("AssertionError at ") and "__final_message_snapshot is not None" in raised


def test_the_sdk_raises_on_a_message_delta_without_usage():
    events = [*PARIS[:-2], {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}, STOP[1]]
    raised = replay_messages_stream(REQUEST, exchange(sse(*events))).raised
    assert raised == "AttributeError: 'NoneType' object has no attribute 'output_tokens'"


def test_the_sdk_silently_drops_a_delta_its_block_cannot_take():
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    thinking = {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hi"}}
    outcome = replay_messages_stream(REQUEST, exchange(sse(START, text, thinking, *STOP)))
    assert outcome.raised is None and outcome.text == "" and outcome.thinking == ""


def test_the_sdk_raises_on_an_error_event_with_its_data():
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    raised = replay_messages_stream(REQUEST, exchange(sse(START, error))).raised
    assert raised.startswith("APIStatusError: ") and "overloaded_error" in raised


def test_the_sdk_names_the_status_of_a_refusal():
    body = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field "
                                                                                             "required"}})
    raised = replay_messages_stream(REQUEST, exchange([body.encode()], 400, "application/json")).raised
    assert raised.startswith("BadRequestError: Error code: 400") and "max_tokens: Field required" in raised


def test_the_sdk_does_not_depend_on_read_boundaries():
    whole = b"".join(sse(*PARIS))
    outcome = replay_messages_stream(REQUEST, exchange([whole[i:i + 7] for i in range(0, len(whole), 7)]))
    assert outcome.raised is None and outcome.tool_uses[0].input == {"location": "Paris"}


def test_the_reference_servers_streams_read_cleanly_in_the_sdk(server):
    run = Run(Target(base_url=server.base_url, model="lmconform-reference"))
    for case in load_cases("messages"):
        if case.streamed and case.valid:
            observed = run.observe(case)
            outcome = replay_messages_stream(observed.exchange.request.body, observed.exchange)
            assert outcome.raised is None, (case.id, outcome.raised)
            assert outcome.stop_reason in ("end_turn", "tool_use", "stop_sequence", "max_tokens"), case.id


@pytest.mark.parametrize("fault, raised", [
    ("messages-block-index-from-one", "IndexError: list index out of range"),
    ("messages-partial-json-cumulative", "ValueError: Unable to parse tool parameter JSON from model."),
    ("messages-usage-missing", "AttributeError: 'NoneType' object has no attribute 'output_tokens'"),
    ("messages-event-name-missing", "AssertionError at "),
])
def test_a_fault_that_breaks_the_sdk_fails_its_verdict_with_the_sdks_words(server, fault, raised):
    run = Run(Target(base_url=f"{server.base_url}/faults/{fault}", model="lmconform-reference"))
    case = next(case for case in load_cases("messages") if case.id == "messages/weather-tool-stream")
    verdict = run.judge(case, REGISTRY["client.anthropic_python.stream_helper"])
    assert verdict.outcome is Outcome.FAILED
    assert f"Actual:   it raises {raised}" in verdict.message
    assert f"Expected: anthropic {anthropic.__version__} reads the stream" in verdict.message
