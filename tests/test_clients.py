"""Client verdicts on hand-built wire captures: Void's accumulator (emulated) and the real openai Python SDK."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from lmconform.clients.openai_python import SdkToolCall, replay_chat_stream
from lmconform.clients.void import EMPTY_RESPONSE, void_read
from lmconform.wire.exchange import BodyChunk, Exchange, Request

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


def exchange(reads: list[bytes], status: int = 200, content_type: str = "text/event-stream") -> Exchange:
    return Exchange(
        request=Request(method="POST", url="http://x/v1/chat/completions", headers={}, body=REQUEST),
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
    unreachable = Exchange(request=Request("POST", "http://x/v1/chat/completions", {}, REQUEST),
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
    timed_out = Exchange(request=Request("POST", "http://x/v1/chat/completions", {}, REQUEST),
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
