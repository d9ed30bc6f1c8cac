"""Client verdicts on hand-built wire captures: Void's accumulator (emulated) and the real openai Python SDK."""

from __future__ import annotations

import json
import warnings
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmconform.clients.openai_python import (
    SdkFunctionCall,
    SdkToolCall,
    replay_chat_stream,
    replay_responses_stream,
    sdk_warnings,
)
from lmconform.clients.void import EMPTY_RESPONSE, void_read
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
REQUEST: dict[str, Any] = {
    "model": "qwen3",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [WEATHER_TOOL],
    "stream": True,
    "stream_options": {"include_usage": True},
}


def chunk(delta: dict[str, Any], finish_reason: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "qwen3",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        **fields,
    }


def sse(*payloads: dict[str, Any] | str, done: bool = True) -> list[bytes]:
    """One read per event; a str payload goes on the data line as it is."""
    lines = [p if isinstance(p, str) else json.dumps(p, ensure_ascii=False) for p in payloads]
    return [f"data: {line}\n\n".encode() for line in lines] + ([b"data: [DONE]\n\n"] if done else [])


def exchange(
    reads: list[bytes],
    status: int = 200,
    content_type: str = "text/event-stream",
    path: str = "/v1/chat/completions",
    body: dict[str, Any] = REQUEST,
) -> HttpExchange:
    return HttpExchange(
        request=HttpRequest(method="POST", url=f"http://x{path}", headers={}, body=body),
        status=status,
        headers={"content-type": content_type},
        chunks=[BodyChunk(at=0.01 * i, data=data) for i, data in enumerate(reads)],
    )


def tool_delta(function: Any, **call: Any) -> dict[str, Any]:
    return {"tool_calls": [{**call, "function": function}]}


def weather(arguments: Any) -> dict[str, Any]:
    return {"name": "get_weather", "arguments": arguments}


PARIS = '{"city": "Paris"}'


# LM Studio's documented shape: id and name once, then argument fragments as strings.
LMSTUDIO_TOOL_CALL = sse(
    chunk({"role": "assistant", "tool_calls": [
        {"index": 0, "id": "814890118", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
    ]}),
    chunk(tool_delta({"arguments": '{"city":'}, index=0)),
    chunk(tool_delta({"arguments": ' "Paris"}'}, index=0)),
    chunk({}, "tool_calls"),
)
ID_NAME_REPEATED = sse(
    chunk(tool_delta(weather('{"city":'), index=0, id="call_1", type="function")),
    chunk(tool_delta(weather(' "Paris"}'), index=0, id="call_1", type="function")),
    chunk({}, "tool_calls"),
)
INDEX_ONE = sse(
    chunk(tool_delta(weather(PARIS), index=1, id="call_1", type="function")),
    chunk({}, "tool_calls"),
)
INDEX_MISSING = sse(
    chunk(tool_delta(weather(PARIS), id="call_1", type="function")),
    chunk({}, "tool_calls"),
)
TYPE_NULL_CONTINUATION = sse(
    chunk(tool_delta(weather(""), index=0, id="call_1", type="function")),
    chunk(tool_delta({"name": None, "arguments": PARIS}, index=0, id=None, type=None)),
    chunk({}, "tool_calls"),
)
ARGUMENTS_OBJECT = sse(
    chunk(tool_delta(weather({"city": "Paris"}), index=0, id="call_1", type="function")),
    chunk({}, "tool_calls"),
)
TEXT_THEN_JUNK = sse(
    chunk({"role": "assistant", "content": "Hel"}),
    "hello from the proxy",
    chunk({"content": "lo"}, "stop"),
)
JSON_INSTEAD_OF_SSE = [json.dumps({
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "qwen3",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "call_1", "type": "function", "function": weather(PARIS)}]}}],
}).encode()]
LMSTUDIO_BARE_STRING_ERROR = [
    b"{\"error\": \"Invalid tool_choice type: 'object'. Supported string values: none, auto, required\"}"
]


# --- Void ---------------------------------------------------------------------------------------------------


def test_void_reads_lmstudio_tool_call() -> None:
    outcome = void_read(exchange(LMSTUDIO_TOOL_CALL))
    assert outcome.error is None
    assert (outcome.tool_name, outcome.tool_id) == ("get_weather", "814890118")
    assert outcome.tool_params_str == PARIS
    assert outcome.tool_params == {"city": "Paris"}
    assert outcome.text == ""


def test_void_reads_plain_text() -> None:
    reads = sse(chunk({"role": "assistant", "content": "Hel"}), chunk({"content": "lo"}, "stop"))
    outcome = void_read(exchange(reads))
    assert (outcome.text, outcome.error, outcome.tool_params) == ("Hello", None, None)


def test_void_concatenates_repeated_id_and_name() -> None:
    outcome = void_read(exchange(ID_NAME_REPEATED))
    assert outcome.tool_name == "get_weatherget_weather"
    assert outcome.tool_id == "call_1call_1"
    assert outcome.tool_params == {"city": "Paris"}  # Void would call a tool that does not exist
    assert outcome.error is None


def test_void_ignores_a_tool_call_at_index_one() -> None:
    outcome = void_read(exchange(INDEX_ONE))
    assert outcome.error == EMPTY_RESPONSE
    assert (outcome.tool_name, outcome.tool_params) == ("", None)


def test_void_ignores_a_tool_call_without_index() -> None:
    outcome = void_read(exchange(INDEX_MISSING))  # undefined !== 0
    assert outcome.error == EMPTY_RESPONSE
    assert outcome.tool_name == ""


def test_void_reads_index_zero_as_a_number_only() -> None:
    as_string = sse(chunk(tool_delta(weather("{}"), index="0")))
    as_float = sse(chunk(tool_delta(weather("{}"), index=0.0)))
    assert void_read(exchange(as_string)).error == EMPTY_RESPONSE
    assert void_read(exchange(as_float)).tool_params == {}


def test_void_turns_object_arguments_into_object_object() -> None:
    outcome = void_read(exchange(ARGUMENTS_OBJECT))
    assert outcome.tool_params_str == "[object Object]"
    assert outcome.tool_params is None  # JSON.parse fails: no tool call, and no error shown either
    assert (outcome.tool_name, outcome.error) == ("get_weather", None)


def test_void_stringifies_non_string_fragments_as_javascript_does() -> None:
    reads = sse(chunk(tool_delta({"name": ["get", None, "weather"], "arguments": "{}"}, index=0, id=814890118)))
    outcome = void_read(exchange(reads))
    assert outcome.tool_id == "814890118"
    assert outcome.tool_name == "get,,weather"


def test_void_takes_an_array_as_params_but_not_a_scalar() -> None:
    def params(arguments: str) -> Any:
        reads = sse(chunk(tool_delta(weather(arguments), index=0)))
        return void_read(exchange(reads)).tool_params

    assert params('["Paris"]') == ["Paris"]
    assert params("null") is None
    assert params("42") is None
    assert params('"Paris"') is None


def test_void_reports_an_empty_stream() -> None:
    assert void_read(exchange(sse())).error == EMPTY_RESPONSE
    assert void_read(exchange([])).error == EMPTY_RESPONSE


def test_void_sees_nothing_in_a_json_body() -> None:
    outcome = void_read(exchange(JSON_INSTEAD_OF_SSE, content_type="application/json"))
    assert outcome.error == EMPTY_RESPONSE
    assert outcome.tool_name == ""


def test_void_shows_the_syntax_error_of_a_non_json_data_line() -> None:
    outcome = void_read(exchange(TEXT_THEN_JUNK))
    assert outcome.error == "SyntaxError: Unexpected token 'h', \"hello from the proxy\" is not valid JSON"
    assert outcome.text == "Hel"  # streamed before the error; the rest never arrives


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ('{"choices": [', "Unexpected end of JSON input"),
        ('{"a": 1}}', "Unexpected non-whitespace character after JSON at position 8 (line 1 column 9)"),
        ('{"a"\n 1}', "Expected ':' after property name in JSON at position 6 (line 2 column 2)"),
        ("Sorry, the model is overloaded", "Unexpected token 'S', \"Sorry, the\"... is not valid JSON"),
        ("this is no JSON at all", "Unexpected token 'h', \"this is no \"... is not valid JSON"),  # read as `true`
        ("NaN", '"NaN" is not valid JSON'),
    ],
)
def test_void_words_json_errors_as_v8_does(payload: str, message: str) -> None:
    reads = [b"".join(f"data: {line}\n".encode() for line in payload.split("\n")) + b"\n"]
    assert void_read(exchange(reads)).error == "SyntaxError: " + message


def test_void_stops_at_done() -> None:
    outcome = void_read(exchange(sse(chunk({"content": "Hi"})) + [b"data: not json\n\n"]))
    assert (outcome.text, outcome.error) == ("Hi", None)


def test_void_crashes_on_a_usage_chunk_without_choices() -> None:
    without = sse(chunk({"content": "Hi"}), {"id": "chatcmpl-1", "usage": {"total_tokens": 3}})
    with_empty = sse(chunk({"content": "Hi"}), chunk({}) | {"choices": [], "usage": {"total_tokens": 3}})
    assert void_read(exchange(without)).error == "TypeError: Cannot read properties of undefined (reading '0')"
    assert void_read(exchange(with_empty)).error is None


def test_void_surfaces_an_error_chunk() -> None:
    reads = sse(chunk({"content": "Hi"}), {"error": {"message": "model crashed", "type": "server_error"}})
    assert void_read(exchange(reads)).error == "Error: model crashed"


def test_void_reads_an_explicit_message_event_as_a_wrapped_object() -> None:
    # The SDK parses data only for events without a name; `event: message` gets {event, data}, without choices.
    reads = [b"event: message\n"] + sse(chunk({"content": "Hi"}))
    assert void_read(exchange(reads)).error == "TypeError: Cannot read properties of undefined (reading '0')"


def test_void_loses_the_first_event_after_a_byte_order_mark() -> None:
    reads = [b"\xef\xbb\xbf"] + sse(chunk({"content": "A"}), chunk({"content": "B"}))
    assert void_read(exchange(reads)).text == "B"


def test_void_ignores_lmstudio_reasoning_but_reads_vllm_reasoning() -> None:
    lmstudio = sse(chunk({"role": "assistant", "reasoning": "Let me think."}), chunk({}, "stop"))
    vllm = sse(chunk({"role": "assistant", "reasoning_content": "Let me think."}), chunk({}, "stop"))
    assert void_read(exchange(lmstudio)).error == EMPTY_RESPONSE
    outcome = void_read(exchange(vllm), provider="vLLM")
    assert (outcome.reasoning, outcome.error) == ("Let me think.", None)


def test_void_shows_status_errors_as_the_sdk_words_them() -> None:
    bare = void_read(exchange(LMSTUDIO_BARE_STRING_ERROR, status=400, content_type="application/json"))
    assert bare.error == (
        "Error: 400 \"Invalid tool_choice type: 'object'. Supported string values: none, auto, required\""
    )
    unauthorized = void_read(exchange([b'{"error": "bad key"}'], status=401, content_type="application/json"))
    assert unauthorized.error == "Invalid LM Studio API key."
    empty = void_read(exchange([], status=500, content_type="text/plain"))
    assert empty.error == "Error: 500 status code (no body)"


def test_void_reports_a_target_that_never_answered() -> None:
    unreachable = HttpExchange(request=HttpRequest("POST", "http://x/v1/chat/completions", {}, REQUEST),
                           error="connection refused", error_kind="unreachable")
    assert void_read(unreachable).error == "Error: Connection error."


def test_void_does_not_depend_on_read_boundaries() -> None:
    body = b"".join(LMSTUDIO_TOOL_CALL).replace(b"\n", b"\r\n")
    byte_by_byte = [body[i : i + 1] for i in range(len(body))]
    assert void_read(exchange(byte_by_byte)) == void_read(exchange(LMSTUDIO_TOOL_CALL))


# --- the openai Python SDK ----------------------------------------------------------------------------------


def test_sdk_reads_lmstudio_tool_call() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(LMSTUDIO_TOOL_CALL))
    assert outcome.raised is None
    assert outcome.sdk_version == openai.__version__
    assert outcome.tool_calls == (SdkToolCall(index=0, id="814890118", name="get_weather", arguments=PARIS),)
    assert outcome.finish_reason == "tool_calls"
    assert outcome.warnings == ()


def test_sdk_concatenates_repeated_id_and_name_silently() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(ID_NAME_REPEATED))
    assert outcome.raised is None
    [call] = outcome.tool_calls
    assert (call.name, call.id) == ("get_weatherget_weather", "call_1call_1")


def test_sdk_raises_index_error_on_a_first_index_of_one() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(INDEX_ONE))
    assert outcome.raised == "IndexError: list index out of range"


def test_sdk_raises_type_error_on_a_tool_call_without_index() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(INDEX_MISSING))
    assert outcome.raised == "TypeError: list indices must be integers or slices, not NoneType"
    assert [call.index for call in outcome.tool_calls] == [None]


def test_sdk_asserts_on_a_null_type_continuation() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(TYPE_NULL_CONTINUATION))
    assert outcome.raised is not None
    assert outcome.raised.startswith("AssertionError at openai/lib/streaming/chat/_completions.py:")
    assert outcome.raised.endswith('assert new_tool.type == "function"')


def test_sdk_hands_object_arguments_through_as_a_dict() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(ARGUMENTS_OBJECT))
    assert outcome.raised is None
    assert outcome.tool_calls[0].arguments == {"city": "Paris"}  # typed str by the SDK, a dict in fact
    assert any("PydanticSerializationUnexpectedValue" in w for w in outcome.warnings)


def test_an_sdks_warnings_leave_out_the_sockets_the_garbage_collector_finds_unclosed() -> None:
    """A ResourceWarning comes from whichever unclosed socket of the process is finalised during the replay (a
    clean replay once showed another test's socket): it is no warning of the SDK's about the answer."""
    with sdk_warnings() as caught:
        warnings.warn("unclosed <socket.socket fd=24>", ResourceWarning, stacklevel=1)
        warnings.warn("Pydantic serializer warnings", UserWarning, stacklevel=1)
    assert [str(warning.message) for warning in caught] == ["Pydantic serializer warnings"]


def test_sdk_parses_strict_tool_arguments_from_the_request() -> None:
    strict = {**WEATHER_TOOL, "function": {**WEATHER_TOOL["function"], "strict": True}}
    broken = sse(chunk(tool_delta(weather('"city": "Paris"}'), index=0, id="call_1", type="function")),
                 chunk({}, "tool_calls"))
    assert replay_chat_stream({**REQUEST, "tools": [strict]}, exchange(broken)).raised == (
        "JSONDecodeError: Extra data: line 1 column 7 (char 6)"
    )
    assert replay_chat_stream(REQUEST, exchange(broken)).raised is None


def test_sdk_ignores_a_malformed_tools_field_of_the_request() -> None:
    outcome = replay_chat_stream({**REQUEST, "tools": "get_weather"}, exchange(LMSTUDIO_TOOL_CALL))
    assert outcome.raised is None
    assert outcome.tool_calls[0].name == "get_weather"


def test_sdk_asserts_on_an_empty_stream() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(sse()))
    assert outcome.raised is not None
    assert outcome.raised.endswith("assert self.__current_completion_snapshot is not None")


def test_sdk_finds_no_chunk_in_a_json_body() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(JSON_INSTEAD_OF_SSE, content_type="application/json"))
    assert outcome.raised is not None
    assert outcome.raised.endswith("assert self.__current_completion_snapshot is not None")
    assert outcome.tool_calls == ()


def test_sdk_skips_chunks_without_the_chunk_object_type() -> None:
    untyped = chunk({"content": "Hi"}, "stop")
    del untyped["object"]
    outcome = replay_chat_stream(REQUEST, exchange(sse(untyped)))
    assert outcome.raised is not None
    assert outcome.raised.endswith("assert self.__current_completion_snapshot is not None")


def test_sdk_raises_on_a_non_json_data_line() -> None:
    outcome = replay_chat_stream(REQUEST, exchange(TEXT_THEN_JUNK))
    assert outcome.raised == "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    assert outcome.text == "Hel"


def test_sdk_keeps_a_bare_string_error_out_of_its_message() -> None:
    bare = exchange(LMSTUDIO_BARE_STRING_ERROR, status=400, content_type="application/json")
    assert replay_chat_stream(REQUEST, bare).raised == "BadRequestError: Error code: 400"
    shaped = [b'{"error": {"message": "Required", "type": "invalid_request_error", "param": "tools.0.name"}}']
    assert replay_chat_stream(REQUEST, exchange(shaped, status=400, content_type="application/json")).raised == (
        "BadRequestError: Error code: 400 - Required"
    )


def test_sdk_reports_a_target_that_never_answered() -> None:
    timed_out = HttpExchange(request=HttpRequest("POST", "http://x/v1/chat/completions", {}, REQUEST),
                         error="no response headers in 30 s", error_kind="timeout")
    assert replay_chat_stream(REQUEST, timed_out).raised == "APITimeoutError: Request timed out."


def test_sdk_reassembles_reads_split_inside_a_character() -> None:
    body = b"".join(sse(chunk({"role": "assistant", "content": "caf\u00e9 \N{GRINNING FACE}"}), chunk({}, "stop")))
    cut = body.index("\u00e9".encode()) + 1  # inside the é; the next read ends inside the emoji
    outcome = replay_chat_stream(REQUEST, exchange([body[:cut], body[cut:cut + 3], body[cut + 3 :]]))
    assert (outcome.raised, outcome.text) == (None, "caf\u00e9 \N{GRINNING FACE}")


def test_sdk_ignores_wire_encoding_headers_of_the_stored_body() -> None:
    capture = exchange(LMSTUDIO_TOOL_CALL)
    capture.headers.update({"content-encoding": "gzip", "content-length": "7"})
    assert replay_chat_stream(REQUEST, capture).raised is None


# --- the openai Python SDK on the Responses API ---------------------------------------------------------------

RESPONSES_REQUEST: dict[str, Any] = {
    "model": "qwen3",
    "input": "Weather in Paris?",
    "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER_TOOL["function"]["parameters"]}],
    "stream": True,
}
CALL_ADDED = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "",
              "status": "in_progress"}
CALL_DONE = {**CALL_ADDED, "arguments": PARIS, "status": "completed"}
MESSAGE_ADDED = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
TEXT_PART = {"type": "output_text", "text": "", "annotations": []}
MESSAGE_DONE = {**MESSAGE_ADDED, "status": "completed", "content": [{**TEXT_PART, "text": "Hello"}]}
LOCATED = {"item_id": "fc_1", "output_index": 0}
IN_MESSAGE = {"item_id": "msg_1", "output_index": 0, "content_index": 0}


def response(status: str = "in_progress", output: list[Any] | None = None, **fields: Any) -> dict[str, Any]:
    """A response object; `output=None` leaves the key out."""
    body = {"id": "resp_1", "object": "response", "created_at": 1700000000, "model": "qwen3", "status": status,
            **fields}
    return body if output is None else {**body, "output": output}


def lifecycle(kind: str, **response_fields: Any) -> dict[str, Any]:
    status = {"created": "in_progress", "in_progress": "in_progress"}.get(kind, kind)
    return {"type": f"response.{kind}", "response": response(status, **response_fields)}


def added(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def item_done(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def arguments_delta(delta: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", **LOCATED, "delta": delta}


def arguments_done(arguments: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.done", **LOCATED, "arguments": arguments}


def text_delta(delta: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", **IN_MESSAGE, "delta": delta}


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    return lifecycle("completed", output=list(output))


def events(*payloads: dict[str, Any], named: bool = True, numbered: bool = True) -> list[bytes]:
    """One read per event, with an `event:` line naming `data.type` and a `sequence_number` counting from 0."""
    reads = []
    for number, payload in enumerate(payloads):
        data = {**payload, "sequence_number": number} if numbered else payload
        name = f"event: {payload.get('type')}\n" if named else ""
        reads.append(f"{name}data: {json.dumps(data)}\n\n".encode())
    return reads


def responses_exchange(reads: list[bytes], status: int = 200, content_type: str = "text/event-stream") -> HttpExchange:
    return exchange(reads, status, content_type, path="/v1/responses", body=RESPONSES_REQUEST)


def replay_responses(*payloads: dict[str, Any], request: dict[str, Any] = RESPONSES_REQUEST, **framing: bool) -> Any:
    return replay_responses_stream(request, responses_exchange(events(*payloads, **framing)))


CALL_START = (lifecycle("created"), lifecycle("in_progress"), added(CALL_ADDED),
              arguments_delta('{"city":'), arguments_delta(' "Paris"}'))
CALL_STREAM = (*CALL_START, arguments_done(PARIS), item_done(CALL_DONE), completed(CALL_DONE))
CALL_EVENT_TYPES = tuple(payload["type"] for payload in CALL_STREAM)
MESSAGE_STREAM = (
    lifecycle("created"),
    added(MESSAGE_ADDED),
    {"type": "response.content_part.added", **IN_MESSAGE, "part": TEXT_PART},
    text_delta("Hel"),
    text_delta("lo"),
    {"type": "response.output_text.done", **IN_MESSAGE, "text": "Hello"},
    {"type": "response.content_part.done", **IN_MESSAGE, "part": {**TEXT_PART, "text": "Hello"}},
    item_done(MESSAGE_DONE),
    completed(MESSAGE_DONE),
)
CALL_PARIS = SdkFunctionCall(call_id="call_1", name="get_weather", arguments=PARIS)


def test_sdk_reads_a_clean_function_call_response() -> None:
    outcome = replay_responses(*CALL_STREAM)
    assert outcome.raised is None
    assert outcome.sdk_version == openai.__version__
    assert outcome.function_calls == (CALL_PARIS,)
    assert (outcome.text, outcome.status) == ("", "completed")
    assert outcome.event_types == CALL_EVENT_TYPES
    assert outcome.warnings == ()


def test_sdk_reads_the_output_text_of_a_message() -> None:
    outcome = replay_responses(*MESSAGE_STREAM)
    assert (outcome.raised, outcome.text, outcome.function_calls) == (None, "Hello", ())
    assert outcome.event_types == tuple(payload["type"] for payload in MESSAGE_STREAM)


def test_sdk_has_no_final_response_without_response_completed() -> None:
    outcome = replay_responses(*CALL_STREAM[:-1])
    assert outcome.raised == "RuntimeError: Didn't receive a `response.completed` event."
    assert outcome.event_types == CALL_EVENT_TYPES[:-1]  # every event was yielded; get_final_response() raises
    assert (outcome.function_calls, outcome.status) == ((), None)


def test_sdk_raises_on_a_delta_before_its_output_item() -> None:
    outcome = replay_responses(lifecycle("created"), arguments_delta(PARIS), added(CALL_ADDED),
                               item_done(CALL_DONE), completed(CALL_DONE))
    assert outcome.raised == (
        "RuntimeError: Received a content event for output index 0 before receiving its output item"
    )
    assert outcome.event_types == ("response.created",)


def test_sdk_takes_the_output_item_from_response_created_instead_of_an_added_event() -> None:
    # The created response's `output` seeds the items by position, so deltas need no `output_item.added` when it
    # lists theirs, and an `added` for that position then counts as a duplicate.
    created = lifecycle("created", output=[CALL_ADDED])
    outcome = replay_responses(created, arguments_delta(PARIS), item_done(CALL_DONE), completed(CALL_DONE))
    assert (outcome.raised, outcome.function_calls) == (None, (CALL_PARIS,))
    assert replay_responses(created, added(CALL_ADDED), *CALL_STREAM[3:]).raised == (
        "RuntimeError: Duplicate response output index 0."
    )


def test_sdk_raises_on_two_items_at_one_output_index() -> None:
    second = {**CALL_ADDED, "id": "fc_2", "call_id": "call_2"}
    outcome = replay_responses(*CALL_STREAM[:-1], added(second), completed(CALL_DONE))
    assert outcome.raised == "RuntimeError: Duplicate response output index 0."
    assert outcome.event_types == CALL_EVENT_TYPES[:-1]


def test_sdk_raises_index_error_on_text_without_its_content_part() -> None:
    without_part = [payload for payload in MESSAGE_STREAM if payload["type"] != "response.content_part.added"]
    outcome = replay_responses(*without_part)
    assert outcome.raised == "IndexError: list index out of range"
    assert outcome.event_types == ("response.created", "response.output_item.added")


def test_sdk_asserts_on_a_text_delta_aimed_at_a_function_call() -> None:
    outcome = replay_responses(*CALL_START[:3], text_delta("Hi"), *CALL_STREAM[3:])
    assert outcome.raised is not None
    assert outcome.raised.startswith("AssertionError at openai/lib/streaming/responses/_responses.py:")
    assert outcome.raised.endswith('assert output.type == "message"')


def test_sdk_raises_when_the_first_event_is_not_response_created() -> None:
    outcome = replay_responses(*CALL_STREAM[1:])
    assert outcome.raised == "RuntimeError: Expected to have received `response.created` before `response.in_progress`"
    assert outcome.event_types == ()


def test_sdk_raises_when_the_response_id_changes() -> None:
    renamed = {**completed(CALL_DONE), "response": response("completed", [CALL_DONE], id="resp_2")}
    assert replay_responses(*CALL_STREAM[:-1], renamed).raised == "RuntimeError: Lifecycle response identity changed."


def test_sdk_raises_when_completed_leaves_an_item_unfinished() -> None:
    outcome = replay_responses(*CALL_STREAM[:-2], completed())
    assert outcome.raised == "RuntimeError: Cannot complete response with unfinished output items."
    # Finished by the completed response itself, the item needs no `output_item.done`.
    assert replay_responses(*CALL_STREAM[:-2], completed(CALL_DONE)).function_calls == (CALL_PARIS,)


def test_sdk_needs_no_sequence_numbers() -> None:
    assert replay_responses(*CALL_STREAM, numbered=False) == replay_responses(*CALL_STREAM)


def test_sdk_reads_the_type_from_data_and_not_from_the_event_line() -> None:
    reads = events(*CALL_STREAM)
    misnamed = [b"event: response.completed\n" + read.split(b"\n", 1)[1] for read in reads]
    unnamed = events(*CALL_STREAM, named=False) + [b"data: [DONE]\n\n"]  # as LiteLLM passes a stream through
    assert replay_responses_stream(RESPONSES_REQUEST, responses_exchange(misnamed)) == replay_responses(*CALL_STREAM)
    assert replay_responses_stream(RESPONSES_REQUEST, responses_exchange(unnamed)) == replay_responses(*CALL_STREAM)
    typeless = {key: value for key, value in arguments_delta(PARIS).items() if key != "type"}
    named_only = [b"event: response.function_call_arguments.delta\n" + read.split(b"\n", 1)[1]
                  for read in events(typeless)]
    reads = events(*CALL_START[:3]) + named_only + events(*CALL_STREAM[5:])
    outcome = replay_responses_stream(RESPONSES_REQUEST, responses_exchange(reads))
    assert outcome.raised is None
    assert outcome.event_types[3] is None  # the event line's name is not used for it


def test_sdk_wraps_an_event_named_like_an_assistants_event() -> None:
    # The one name the SDK does read: `thread.*` (Assistants) wraps the data as {data, event}, which has no type.
    reads = events(*CALL_STREAM)
    reads[3] = b"event: thread.message.delta\n" + reads[3].split(b"\n", 1)[1]
    outcome = replay_responses_stream(RESPONSES_REQUEST, responses_exchange(reads))
    assert (outcome.raised, outcome.function_calls) == (None, (CALL_PARIS,))
    assert outcome.event_types[3] is None
    reads[0] = b"event: thread.created\n" + reads[0].split(b"\n", 1)[1]
    assert replay_responses_stream(RESPONSES_REQUEST, responses_exchange(reads)).raised == (
        "RuntimeError: Expected to have received `response.created` before `None`"
    )


def test_sdk_final_response_is_what_response_completed_says() -> None:
    lyon = '{"city": "Lyon"}'
    disagreeing = (*CALL_START, arguments_done(lyon), item_done(CALL_DONE))
    [call] = replay_responses(*disagreeing, completed(CALL_DONE)).function_calls
    assert call.arguments == PARIS  # neither the deltas nor `arguments.done` are compared with anything
    berlin = {**CALL_DONE, "arguments": '{"city": "Berlin"}'}
    [call] = replay_responses(*disagreeing, completed(berlin)).function_calls
    assert call.arguments == '{"city": "Berlin"}'
    # Without `output` in the completed response, the `output_item.done` items stand in for it.
    [call] = replay_responses(*CALL_START, arguments_done(PARIS), item_done({**CALL_DONE, "arguments": lyon}),
                              lifecycle("completed")).function_calls
    assert call.arguments == lyon


def test_sdk_loses_streamed_text_to_an_empty_completed_output() -> None:
    outcome = replay_responses(*MESSAGE_STREAM[:-1], completed())
    assert (outcome.raised, outcome.text, outcome.status) == (None, "", "completed")


def test_sdk_responses_hands_object_arguments_through_as_a_dict() -> None:
    as_object = {**CALL_DONE, "arguments": {"city": "Paris"}}
    outcome = replay_responses(*CALL_STREAM[:-2], item_done(as_object), completed(as_object))
    assert outcome.raised is None
    assert outcome.function_calls[0].arguments == {"city": "Paris"}
    assert any("PydanticSerializationUnexpectedValue" in w for w in outcome.warnings)


def test_sdk_parses_strict_function_arguments_when_the_response_completes() -> None:
    strict = {**RESPONSES_REQUEST, "tools": [{**RESPONSES_REQUEST["tools"][0], "strict": True}]}
    broken = {**CALL_DONE, "arguments": '"city": "Paris"}'}
    stream = (*CALL_STREAM[:-2], item_done(broken), completed(broken))
    assert replay_responses(*stream, request=strict).raised == "JSONDecodeError: Extra data: line 1 column 7 (char 6)"
    assert replay_responses(*stream).raised is None


def test_sdk_ignores_request_fields_the_helper_would_refuse() -> None:
    chat_shaped = {**RESPONSES_REQUEST, "tools": [WEATHER_TOOL], "response_id": "resp_0", "text_format": "x"}
    assert replay_responses(*CALL_STREAM, request=chat_shaped) == replay_responses(*CALL_STREAM)
    assert replay_responses(*CALL_STREAM, request={"tools": None, "model": 7}).raised is None


def test_sdk_raises_on_an_error_key_but_reads_an_error_event_as_any_other() -> None:
    error_key = {"type": "error", "error": {"message": "model crashed"}}
    assert replay_responses(*CALL_START, error_key).raised == "APIError: model crashed"
    error_event = {"type": "error", "code": "server_error", "message": "model crashed", "param": None}
    outcome = replay_responses(*CALL_START, error_event)
    assert outcome.raised == "RuntimeError: Didn't receive a `response.completed` event."
    assert outcome.event_types[-1] == "error"


def test_sdk_raises_bad_request_on_a_400_json_error() -> None:
    def replay(body: bytes) -> str | None:
        return replay_responses_stream(RESPONSES_REQUEST, responses_exchange([body], 400, "application/json")).raised

    shaped = b'{"error": {"message": "Unknown model", "type": "invalid_request_error", "param": "model"}}'
    assert replay(shaped) == "BadRequestError: Error code: 400 - Unknown model"
    assert replay(b'{"error": "Unknown model"}') == "BadRequestError: Error code: 400"


def test_sdk_reports_a_responses_target_that_never_answered() -> None:
    refused = HttpExchange(request=HttpRequest("POST", "http://x/v1/responses", {}, RESPONSES_REQUEST),
                       error="connection refused", error_kind="unreachable")
    outcome = replay_responses_stream(RESPONSES_REQUEST, refused)
    assert (outcome.raised, outcome.event_types) == ("APIConnectionError: Connection error.", ())


def test_sdk_output_text_raises_on_text_that_is_not_a_string() -> None:
    numeric = {**MESSAGE_DONE, "content": [{**TEXT_PART, "text": 42}]}
    outcome = replay_responses(*MESSAGE_STREAM[:-1], completed(numeric))
    assert outcome.raised == "TypeError: sequence item 0: expected str instance, int found"
    assert (outcome.text, outcome.status) == ("", "completed")  # get_final_response() itself succeeded


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)


@given(st.one_of(json_values.map(json.dumps), st.text(max_size=40),
                 json_values.map(json.dumps).flatmap(lambda text: st.integers(0, len(text)).map(lambda cut: text[:cut]))))
def test_json_parse_takes_the_fast_path_only_where_v8s_port_agrees(text: str) -> None:
    """What Void's JSON.parse makes of a text is the V8 port's, whether or not the fast path took it."""
    from lmconform.clients.js.json_parse import _V8JsonParser, json_parse
    from lmconform.clients.js.values import Thrown

    def outcome(parse):
        try:
            return ("value", parse(text))
        except Thrown as thrown:
            return ("thrown", thrown.text)

    fast, ported = outcome(json_parse), outcome(lambda text: _V8JsonParser(text).parse())
    assert fast == ported or (fast[0] == ported[0] == "value" and json.dumps(fast[1]) == json.dumps(ported[1]))
