"""The reference server's faults and variants from docs/coverage.md over real HTTP: each changes what it names, and
the clean server's new behaviour (an output cap, reasoning, structured output, unknown routes) is as documented."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest
from fault_effects import FaultEffects
from test_reference_responses import TOOL_REQUEST as RESPONSES_TOOL_REQUEST
from test_reference_responses import create, of_type, stream, types
from test_reference_responses import post as post_responses
from test_reference_server import (
    TEXT_REQUEST,
    TOOL_REQUEST,
    TWO_CALLS,
    WEATHER,
    ask,
    chunks,
    data_lines,
    deltas,
    finish_reasons,
    post,
    tool_entries,
)

LONG = "Tell me a long story about a lighthouse keeper and the ships she guided home."
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}}}


def message(response: httpx.Response) -> dict[str, Any]:
    return response.json()["choices"][0]["message"]


def response_text(body: dict[str, Any]) -> str:
    (item,) = [item for item in body["output"] if item["type"] == "message"]
    return item["content"][0]["text"]


# --- the clean server ---------------------------------------------------------------------------------------


def test_max_tokens_cuts_the_answer_and_says_length(client: httpx.Client) -> None:
    body = post(client, {**ask(LONG), "max_tokens": 3}).json()
    assert body["choices"][0]["finish_reason"] == "length" and body["choices"][0]["message"]["content"] == "You said: Tell"
    assert body["usage"]["completion_tokens"] == 3
    assert post(client, {**ask(LONG), "max_tokens": -1}).json()["choices"][0]["finish_reason"] == "stop"


def test_a_messages_answer_cut_by_max_tokens_says_so(client: httpx.Client) -> None:
    body = {"model": "test-model", "max_tokens": 3, "messages": [{"role": "user", "content": LONG}]}
    answer = client.post("/v1/messages", json=body).json()
    assert answer["stop_reason"] == "max_tokens" and answer["usage"]["output_tokens"] == 3
    assert client.post("/faults/messages-end-turn-at-max-tokens/v1/messages", json=body).json()["stop_reason"] == "end_turn"


def test_reasoning_effort_brings_reasoning_first(client: httpx.Client) -> None:
    streamed = deltas(post(client, {**TEXT_REQUEST, "reasoning_effort": "low"}))
    assert "".join(delta.get("reasoning", "") for delta in streamed) == "Thinking about: Hello there, friend"
    assert streamed[1].keys() == {"reasoning"} and "content" in streamed[-2]
    assert message(post(client, {**ask("Hi"), "reasoning_effort": "low"}))["reasoning"] == "Thinking about: Hi"


def test_response_formats(client: httpx.Client) -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}
    assert json.loads(message(post(client, {**ask("Yes?"), "response_format": schema}))["content"]) == {"answer": "yes"}
    assert json.loads(message(post(client, {**ask("Hi"), "response_format": {"type": "json_object"}}))["content"])
    refused = post(client, {**ask("Hi"), "response_format": {"type": "json_schema", "json_schema": {"name": "a"}}})
    assert refused.status_code == 400 and "schema" in refused.json()["error"]


def test_a_prompt_longer_than_the_context_is_refused(client: httpx.Client) -> None:
    response = post(client, ask("word " * 9000))
    assert response.status_code == 400 and "context" in response.json()["error"]


def test_responses_max_output_tokens_makes_it_incomplete(client: httpx.Client) -> None:
    body = create(client, {"input": LONG, "max_output_tokens": 3})
    assert body["status"] == "incomplete" and body["incomplete_details"] == {"reason": "max_output_tokens"}
    events = stream(client, {"input": LONG, "max_output_tokens": 3})
    assert types(events)[-1] == "response.incomplete" and events[0][1]["response"]["incomplete_details"] is None


def test_responses_text_format(client: httpx.Client) -> None:
    answer = create(client, {"input": "Yes?", "text": {"format": {"type": "json_schema", "name": "a", "schema": SCHEMA}}})
    assert json.loads(response_text(answer)) == {"answer": "yes"}
    assert response_text(create(client, {"input": "Hi", "text": {}})) == "You said: Hi"
    refused = post_responses(client, {"input": "Hi", "text": {"format": {"type": "json_schema", "name": "a"}}})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "text.format.schema"


# --- faults and variants: each changes what it names ----------------------------------------------------------

FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("unknown-route-200")
def _(client: httpx.Client) -> None:
    response = client.get("/faults/unknown-route-200/v1/nothing-here")
    assert response.status_code == 200 and response.json()["error"].startswith("Unexpected endpoint or method.")
    assert client.get("/v1/nothing-here").status_code == 404


@effect("name-empty-continuation")
def _(client: httpx.Client) -> None:
    first, *rest = tool_entries(post(client, TOOL_REQUEST, "name-empty-continuation"))
    assert first["function"]["name"] == "get_weather"
    assert rest and all(entry["function"]["name"] == "" and entry["type"] == "function" for entry in rest)


@effect("tool-calls-empty-list")
def _(client: httpx.Client) -> None:
    assert message(post(client, ask("Hi"), "tool-calls-empty-list"))["tool_calls"] == []
    assert message(post(client, {**TOOL_REQUEST, "stream": False}, "tool-calls-empty-list"))["tool_calls"]


@effect("tool-id-empty")
def _(client: httpx.Client) -> None:
    assert tool_entries(post(client, TOOL_REQUEST, "tool-id-empty"))[0]["id"] == ""
    assert message(post(client, {**TOOL_REQUEST, "stream": False}, "tool-id-empty"))["tool_calls"][0]["id"] == ""


@effect("finish-tool-calls-without-call")
def _(client: httpx.Client) -> None:
    assert finish_reasons(post(client, TEXT_REQUEST, "finish-tool-calls-without-call"))[-1] == "tool_calls"
    cut = post(client, {**ask(LONG), "max_tokens": 3}, "finish-tool-calls-without-call").json()
    assert cut["choices"][0]["finish_reason"] == "length"


@effect("finish-stop-at-max-tokens")
def _(client: httpx.Client) -> None:
    body = post(client, {**ask(LONG), "max_tokens": 3}, "finish-stop-at-max-tokens").json()
    assert body["choices"][0]["finish_reason"] == "stop" and body["usage"]["completion_tokens"] == 3


@effect("parallel-calls-ignored")
def _(client: httpx.Client) -> None:
    calls = tool_entries(post(client, {**TWO_CALLS, "parallel_tool_calls": False}, "parallel-calls-ignored"))
    assert len([entry for entry in calls if "id" in entry]) == 2


@effect("tool-choice-null-rejected")
def _(client: httpx.Client) -> None:
    response = post(client, {**ask("Weather?", tools=[WEATHER]), "tool_choice": None}, "tool-choice-null-rejected")
    assert response.status_code == 400 and "'object'" in response.json()["error"]
    assert post(client, {**ask("Weather?", tools=[WEATHER]), "tool_choice": None}).status_code == 200


@effect("json-object-rejected")
def _(client: httpx.Client) -> None:
    response = post(client, {**ask("Hi"), "response_format": {"type": "json_object"}}, "json-object-rejected")
    assert response.status_code == 400 and "response_format.type" in response.json()["error"]


@effect("reasoning-in-content")
def _(client: httpx.Client) -> None:
    answer = message(post(client, {**ask("Hi"), "reasoning_effort": "low"}, "reasoning-in-content"))
    assert answer["content"] == "<think>Thinking about: Hi</think>You said: Hi" and "reasoning" not in answer


@effect("content-as-reasoning")
def _(client: httpx.Client) -> None:
    answer = message(post(client, {**ask("Hi"), "reasoning_effort": "low"}, "content-as-reasoning"))
    assert answer["content"] == "" and answer["reasoning"] == "Thinking about: Hi You said: Hi"


@effect("role-repeated")
def _(client: httpx.Client) -> None:
    assert all(delta["role"] == "assistant" for delta in deltas(post(client, TEXT_REQUEST, "role-repeated")))


@effect("chunk-created-missing")
def _(client: httpx.Client) -> None:
    assert all("created" not in chunk and "model" not in chunk
               for chunk in chunks(post(client, TEXT_REQUEST, "chunk-created-missing")))


@effect("usage-every-chunk")
def _(client: httpx.Client) -> None:
    asked = {**TEXT_REQUEST, "stream_options": {"include_usage": True}}
    assert all(chunk["usage"]["total_tokens"] for chunk in chunks(post(client, asked, "usage-every-chunk")))


@effect("error-swallowed-mid-stream")
def _(client: httpx.Client) -> None:
    lines = data_lines(post(client, TEXT_REQUEST, "error-swallowed-mid-stream"))
    assert len(lines) == 3 and lines[-1] == "[DONE]" and set(finish_reasons(
        post(client, TEXT_REQUEST, "error-swallowed-mid-stream"))) == {None}


@effect("stream-error-bare-string")
def _(client: httpx.Client) -> None:
    lines = data_lines(post(client, TEXT_REQUEST, "stream-error-bare-string"))
    assert isinstance(json.loads(lines[2])["error"], str) and lines[3:] == ["[DONE]"]


@effect("keepalive-after-event-id")
def _(client: httpx.Client) -> None:
    body = post(client, TEXT_REQUEST, "keepalive-after-event-id").text
    assert body.startswith("id: 1\ndata: {") and "\n\n: ping\n\nid: 2\n" in body


@effect("tool-call-echoed-as-text")
def _(client: httpx.Client) -> None:
    answer = message(post(client, {**TOOL_REQUEST, "stream": False}, "tool-call-echoed-as-text"))
    assert json.loads(answer["content"])["name"] == "get_weather" and answer["tool_calls"]


OVERFLOW = "word " * 9000  # over the reference server's context of 7168 words
# Each door's request with a prompt of `text`: chat completions, Responses, Messages, LM Studio's native chat.
DOOR_REQUESTS = {
    "/v1/chat/completions": lambda text: ask(text),
    "/v1/responses": lambda text: {"model": "test-model", "input": text},
    "/v1/messages": lambda text: {"model": "test-model", "max_tokens": 64, "messages": [{"role": "user", "content": text}]},
    "/api/v1/chat": lambda text: {"model": "test-model", "input": text},
}
# What each door answers an overflow with: its error shape, in words agents read as an overflow.
OVERFLOW_REFUSALS = {
    "/v1/chat/completions": lambda body: "context length of only 7168 tokens" in body["error"],
    "/v1/responses": lambda body: body["error"]["code"] == "context_length_exceeded",
    "/v1/messages": lambda body: body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    and body["error"]["message"] == "prompt is too long: 9000 tokens > 7168 maximum",
    "/api/v1/chat": lambda body: "context length of only 7168 tokens" in body["error"]["message"],
}


def overflow_at(client: httpx.Client, path: str, fault: str | None = None, **extra: Any) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}{path}", json={**DOOR_REQUESTS[path](OVERFLOW), **extra})


@pytest.mark.parametrize("path", sorted(DOOR_REQUESTS))
def test_every_door_refuses_an_overflow_in_its_own_shape(client: httpx.Client, path: str) -> None:
    for streamed in (False, True):
        response = overflow_at(client, path, stream=streamed)
        assert response.status_code == 400 and OVERFLOW_REFUSALS[path](response.json()), response.text
    assert client.post(path, json=DOOR_REQUESTS[path]("Hi")).status_code == 200


@effect("context-overflow-500")
def _(client: httpx.Client) -> None:
    for path in DOOR_REQUESTS:
        assert overflow_at(client, path, "context-overflow-500").status_code == 500
    assert post(client, ask("Hi"), "context-overflow-500").status_code == 200


@effect("context-overflow-detail")
def _(client: httpx.Client) -> None:
    for path in DOOR_REQUESTS:
        response = overflow_at(client, path, "context-overflow-detail")
        assert response.status_code == 400 and response.json() == {"detail": "Prompt too long"}


@effect("context-overflow-as-text")
def _(client: httpx.Client) -> None:
    for path in DOOR_REQUESTS:
        response = overflow_at(client, path, "context-overflow-as-text")
        assert response.status_code == 200 and "context the overflows" in response.text
    streamed = overflow_at(client, "/v1/messages", "context-overflow-as-text", stream=True)
    assert streamed.status_code == 200 and "message_stop" in streamed.text  # the words cut into deltas


@effect("context-overflow-stream-cut")
def _(client: httpx.Client) -> None:
    ends = {"/v1/chat/completions": "[DONE]", "/v1/responses": "response.completed", "/v1/messages": "message_stop",
            "/api/v1/chat": "chat.end"}
    for path, end in ends.items():
        response = overflow_at(client, path, "context-overflow-stream-cut", stream=True)
        assert response.status_code == 200 and response.text.count("data: ") == 2 and end not in response.text
        assert overflow_at(client, path, "context-overflow-stream-cut").status_code == 400  # not streamed: refused


@effect("models-bare-list")
def _(client: httpx.Client) -> None:
    listed = client.get("/faults/models-bare-list/v1/models").json()
    assert isinstance(listed, list) and listed[0]["id"] == "lmconform-reference"


@effect("multi-item-input-rejected")
def _(client: httpx.Client) -> None:
    two = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert post_responses(client, {"input": two}, "multi-item-input-rejected").status_code == 400
    assert post_responses(client, {"input": two[1:]}, "multi-item-input-rejected").status_code == 200


@effect("text-format-required")
def _(client: httpx.Client) -> None:
    response = post_responses(client, {"input": "Hi", "text": {}}, "text-format-required")
    assert response.status_code == 400 and response.json()["error"]["code"] == "missing_required_parameter"


@effect("empty-parameters-rejected")
def _(client: httpx.Client) -> None:
    tool = {"type": "function", "name": "now", "parameters": {}}
    response = post_responses(client, {"input": "now?", "tools": [tool]}, "empty-parameters-rejected")
    assert response.status_code == 400 and response.json()["error"]["param"] == "tools.0"


@effect("structured-output-ignored")
def _(client: httpx.Client) -> None:
    asked = {"input": "Yes?", "text": {"format": {"type": "json_schema", "name": "a", "schema": SCHEMA}}}
    assert response_text(create(client, asked, "structured-output-ignored")) == "You said: Yes?"


@effect("responses-tools-omitted")
def _(client: httpx.Client) -> None:
    assert "tools" not in create(client, {"input": "Hi"}, "responses-tools-omitted")
    assert create(client, RESPONSES_TOOL_REQUEST, "responses-tools-omitted")["tools"]


@effect("annotations-missing")
def _(client: httpx.Client) -> None:
    body = create(client, {"input": "Hi"}, "annotations-missing")
    assert "annotations" not in body["output"][0]["content"][0]


@effect("completed-when-truncated")
def _(client: httpx.Client) -> None:
    body = create(client, {"input": LONG, "max_output_tokens": 3}, "completed-when-truncated")
    assert body["status"] == "completed" and body["incomplete_details"] is None


@effect("responses-tool-choice-ignored")
def _(client: httpx.Client) -> None:
    forced = {**RESPONSES_TOOL_REQUEST, "input": "Hello", "tool_choice": "required"}
    assert create(client, forced)["output"][0]["type"] == "function_call"
    assert create(client, forced, "responses-tool-choice-ignored")["output"][0]["type"] == "message"


@effect("content-part-added-missing")
def _(client: httpx.Client) -> None:
    events = types(stream(client, {"input": "Hi"}, "content-part-added-missing"))
    assert "response.content_part.added" not in events and "response.content_part.done" in events


@effect("text-event-index-missing")
def _(client: httpx.Client) -> None:
    events = stream(client, {"input": "Hi"}, "text-event-index-missing")
    assert all("output_index" not in data for data in of_type(events, "response.output_text.delta"))
    assert all("output_index" in data for data in of_type(events, "response.output_item.added"))


@effect("delta-logprobs-missing")
def _(client: httpx.Client) -> None:
    events = stream(client, {"input": "Hi"}, "delta-logprobs-missing")
    assert all("logprobs" not in data for data in of_type(events, "response.output_text.delta"))


@effect("responses-error-string")
def _(client: httpx.Client) -> None:
    assert post_responses(client, {}, "responses-error-string").json() == {"error": "Required"}


@effect("llama-server-tool-deltas")
def _(client: httpx.Client) -> None:
    first = tool_entries(post(client, TOOL_REQUEST, "llama-server-tool-deltas"))[0]
    assert first["function"]["name"] == "get_weather" and first["function"]["arguments"].startswith("{")


@effect("type-repeated-continuation")
def _(client: httpx.Client) -> None:
    assert all(entry["type"] == "function" for entry in tool_entries(post(client, TOOL_REQUEST,
                                                                          "type-repeated-continuation")))


@effect("whole-call-one-chunk")
def _(client: httpx.Client) -> None:
    (entry,) = tool_entries(post(client, TOOL_REQUEST, "whole-call-one-chunk"))
    assert json.loads(entry["function"]["arguments"])["city"] == "Paris"


@effect("vllm-tool-ids")
def _(client: httpx.Client) -> None:
    assert tool_entries(post(client, TOOL_REQUEST, "vllm-tool-ids"))[0]["id"].startswith("chatcmpl-tool-")


@effect("usage-timings")
def _(client: httpx.Client) -> None:
    last = chunks(post(client, {**TEXT_REQUEST, "stream_options": {"include_usage": True}}, "usage-timings"))[-1]
    assert last["choices"] == [] and last["timings"]["predicted_n"] == 1


@effect("usage-chunk-with-choice")
def _(client: httpx.Client) -> None:
    asked = {**TEXT_REQUEST, "stream_options": {"include_usage": True}}
    assert chunks(post(client, asked, "usage-chunk-with-choice"))[-1]["choices"] == [{"index": 0, "delta": {}}]


@effect("role-with-content")
def _(client: httpx.Client) -> None:
    assert deltas(post(client, TEXT_REQUEST, "role-with-content"))[0] == {"role": "assistant", "content": "You "}


@effect("keepalive-comments")
def _(client: httpx.Client) -> None:
    body = post(client, TEXT_REQUEST, "keepalive-comments").text
    assert body.startswith(":\n\n: ping - ") and "\nid:" not in body


@effect("extra-body-keys")
def _(client: httpx.Client) -> None:
    body = post(client, ask("Hi"), "extra-body-keys").json()
    assert body["stats"] and body["timings"] and body["system_fingerprint"].startswith("b")


@effect("content-empty-with-tool-calls")
def _(client: httpx.Client) -> None:
    answer = message(post(client, {**TOOL_REQUEST, "stream": False}, "content-empty-with-tool-calls"))
    assert answer["content"] == "" and answer["tool_calls"]


@effect("error-object-integer-code")
def _(client: httpx.Client) -> None:
    error = post(client, {"model": "x"}, "error-object-integer-code").json()["error"]
    assert error["code"] == 400 and error["message"] == "'messages' field is required"


@effect("models-context-length-vllm")
def _(client: httpx.Client) -> None:
    (model,) = client.get("/faults/models-context-length-vllm/v1/models").json()["data"]
    assert model["max_model_len"] == 7168 and "max_context_length" not in model


@effect("models-context-length-llama-cpp")
def _(client: httpx.Client) -> None:
    (model,) = client.get("/faults/models-context-length-llama-cpp/v1/models").json()["data"]
    assert model["meta"]["n_ctx_train"] == 32768 and "max_context_length" not in model
    props = client.get("/faults/models-context-length-llama-cpp/props").json()
    assert props["default_generation_settings"]["n_ctx"] == 7168
    assert client.get("/props").status_code == 404


@effect("models-extra-keys")
def _(client: httpx.Client) -> None:
    first, second = client.get("/faults/models-extra-keys/v1/models").json()["data"]
    assert first["aliases"] == [] and second["id"].startswith("text-embedding")


@effect("responses-telemetry")
def _(client: httpx.Client) -> None:
    assert all("timings" in data for _, data in stream(client, {"input": "Hi"}, "responses-telemetry"))


@effect("done-after-completed")
def _(client: httpx.Client) -> None:
    response = post_responses(client, {"input": "Hi", "stream": True}, "done-after-completed")
    assert response.text.endswith("\n\ndata: [DONE]\n\n") and "response.completed" in response.text


# --- stop strings, log probabilities, usage, and a stream against its body -----------------------------------

SENTENCE = ask("Repeat this sentence exactly: The capital of France is Paris.")
STOPPED = {**SENTENCE, "stop": ["capital of", "Paris", "\n\n", "zebra"]}
LOGPROBS = {**ask("Say hello to Ada."), "logprobs": True, "top_logprobs": 2}
SET_LIGHT = {"type": "function", "function": {"name": "set_light", "parameters": {
    "type": "object", "properties": {"room": {"enum": ["kitchen", "hall"]}, "state": {"enum": ["on", "off"]}}}}}
FORCED = {**ask("Turn the kitchen light on."), "tools": [SET_LIGHT], "tool_choice": "required"}


def streamed_text(response: httpx.Response) -> str:
    return "".join(delta.get("content") or "" for delta in deltas(response))


def streamed_logprobs(response: httpx.Response) -> list[dict[str, Any]]:
    return [entry for chunk in chunks(response) for choice in chunk["choices"]
            for entry in (choice.get("logprobs") or {}).get("content") or []]


def test_stop_cuts_before_the_first_stop_string(client: httpx.Client) -> None:
    body = post(client, STOPPED).json()["choices"][0]
    assert body["message"]["content"] == "You said: Repeat this sentence exactly: The " and body["finish_reason"] == "stop"
    streamed = post(client, {**STOPPED, "stream": True})
    assert streamed_text(streamed) == body["message"]["content"] and finish_reasons(streamed)[-1] == "stop"
    for refused in ({"stop": ["a", "b", "c", "d", "e"]}, {"top_logprobs": 2}, {"logprobs": True, "top_logprobs": 21}):
        assert post(client, {**SENTENCE, **refused}).status_code == 400


def test_logprobs_come_a_piece_at_a_time(client: httpx.Client) -> None:
    choice = post(client, LOGPROBS).json()["choices"][0]
    entries = choice["logprobs"]["content"]
    assert "".join(entry["token"] for entry in entries) == choice["message"]["content"]
    assert all(len(entry["top_logprobs"]) == 2 and entry["bytes"] == list(entry["token"].encode()) for entry in entries)
    streamed = post(client, {**LOGPROBS, "stream": True})
    assert streamed_logprobs(streamed) == entries
    assert post(client, ask("Hi")).json()["choices"][0]["logprobs"] is None


def test_responses_logprobs_when_included(client: httpx.Client) -> None:
    asked = {"input": "Say hello to Ada.", "include": ["message.output_text.logprobs"]}
    part = create(client, asked)["output"][0]["content"][0]
    assert "".join(entry["token"] for entry in part["logprobs"]) == part["text"]
    streamed = [entry for data in of_type(stream(client, asked), "response.output_text.delta")
                for entry in data["logprobs"]]
    assert streamed == part["logprobs"] and all(entry["top_logprobs"] == [] for entry in streamed)
    assert create(client, {"input": "Hi"})["output"][0]["content"][0]["logprobs"] == []
    ranked = {**asked, "top_logprobs": 3}
    entries = create(client, ranked)["output"][0]["content"][0]["logprobs"]
    assert entries and all(len(entry["top_logprobs"]) == 3 for entry in entries)
    assert [entry for data in of_type(stream(client, ranked), "response.output_text.delta")
            for entry in data["logprobs"]] == entries


@effect("top-logprobs-short")
def _(client: httpx.Client) -> None:
    entries = post(client, LOGPROBS, "top-logprobs-short").json()["choices"][0]["logprobs"]["content"]
    assert entries and all(len(entry["top_logprobs"]) == 1 for entry in entries)


@effect("stop-ignored")
def _(client: httpx.Client) -> None:
    assert "Paris" in message(post(client, STOPPED, "stop-ignored"))["content"]


@effect("n-ignored")
def _(client: httpx.Client) -> None:
    asked = {**ask("Say hello to Ada."), "n": 2}
    assert len(post(client, asked).json()["choices"]) == 2
    assert len(post(client, asked, "n-ignored").json()["choices"]) == 1
    streamed = {**asked, "stream": True}
    indexes = [[choice["index"] for choice in chunk["choices"]] for chunk in chunks(post(client, streamed))]
    assert {index for chunk in indexes for index in chunk} == {0, 1} and all(len(chunk) == 1 for chunk in indexes)
    assert {choice["index"] for chunk in chunks(post(client, streamed, "n-ignored")) for choice in chunk["choices"]} \
        == {0}


@effect("seed-ignored")
def _(client: httpx.Client) -> None:
    sampled = {**ask("Say hello to Ada."), "temperature": 1, "seed": 7}
    assert len({message(post(client, sampled))["content"] for _ in range(2)}) == 1
    assert len({message(post(client, sampled, "seed-ignored"))["content"] for _ in range(2)}) == 2
    assert streamed_text(post(client, {**sampled, "stream": True}, "seed-ignored")) != \
        message(post(client, sampled, "seed-ignored"))["content"]


@effect("stop-flushed-in-stream")
def _(client: httpx.Client) -> None:
    assert streamed_text(post(client, {**STOPPED, "stream": True}, "stop-flushed-in-stream")).endswith("The capital ")
    assert message(post(client, STOPPED, "stop-flushed-in-stream"))["content"].endswith("The ")


@effect("stop-finish-length")
def _(client: httpx.Client) -> None:
    assert post(client, STOPPED, "stop-finish-length").json()["choices"][0]["finish_reason"] == "length"
    assert post(client, SENTENCE, "stop-finish-length").json()["choices"][0]["finish_reason"] == "stop"


@effect("logprobs-dropped")
def _(client: httpx.Client) -> None:
    assert post(client, LOGPROBS, "logprobs-dropped").json()["choices"][0]["logprobs"] is None


@effect("logprobs-malformed")
def _(client: httpx.Client) -> None:
    entries = streamed_logprobs(post(client, {**LOGPROBS, "stream": True}, "logprobs-malformed"))
    assert entries and all("top_logprobs" not in entry for entry in entries)


@effect("logprobs-tokens-mismatch")
def _(client: httpx.Client) -> None:
    entries = post(client, LOGPROBS, "logprobs-tokens-mismatch").json()["choices"][0]["logprobs"]["content"]
    assert "".join(entry["token"] for entry in entries) == "Yousaid:SayhellotoAda."


@effect("logprobs-refused")
def _(client: httpx.Client) -> None:
    refused = post(client, LOGPROBS, "logprobs-refused")
    assert refused.status_code == 400 and "logprobs" in refused.json()["error"]
    assert post(client, ask("Hi"), "logprobs-refused").status_code == 200


@effect("usage-total-wrong")
def _(client: httpx.Client) -> None:
    usage = post(client, ask("Hi"), "usage-total-wrong").json()["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] + 1
    streamed = chunks(post(client, {**TEXT_REQUEST, "stream_options": {"include_usage": True}}, "usage-total-wrong"))
    counts = streamed[-1]["usage"]
    assert counts["total_tokens"] == counts["prompt_tokens"] + counts["completion_tokens"] + 1


@effect("stream-argument-dropped")
def _(client: httpx.Client) -> None:
    (entry,) = tool_entries(post(client, {**FORCED, "stream": True}, "stream-argument-dropped"))
    assert json.loads(entry["function"]["arguments"]) == {"room": "kitchen"}
    (call,) = message(post(client, FORCED, "stream-argument-dropped"))["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"room": "kitchen", "state": "on"}


@effect("stream-finish-differs")
def _(client: httpx.Client) -> None:
    assert finish_reasons(post(client, {**FORCED, "stream": True}, "stream-finish-differs"))[-1] == "stop"
    assert post(client, FORCED, "stream-finish-differs").json()["choices"][0]["finish_reason"] == "tool_calls"


@effect("responses-logprobs-dropped")
def _(client: httpx.Client) -> None:
    asked = {"input": "Hi", "include": ["message.output_text.logprobs"]}
    assert create(client, asked, "responses-logprobs-dropped")["output"][0]["content"][0]["logprobs"] == []


@effect("stored-before-done")
def _(client: httpx.Client) -> None:
    given = create(client, {"input": "Hi"}, "stored-before-done")
    stored = client.get(f"/v1/responses/{given['id']}").json()
    assert given["status"] == "completed" and stored["status"] == "in_progress" and stored["output"] == []


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


BOUNDED = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 100}}, "required": ["n"],
           "additionalProperties": False}


def _off_schema(text: str) -> bool:
    return not jsonschema.Draft202012Validator(BOUNDED).is_valid(json.loads(text))


@effect("structured-output-off-schema")
def _(client: httpx.Client) -> None:
    asked = ask("Give me a number", response_format={"type": "json_schema", "json_schema": {"name": "n", "schema": BOUNDED}})
    assert not _off_schema(message(post(client, asked))["content"])
    assert _off_schema(message(post(client, asked, "structured-output-off-schema"))["content"])


@effect("schema-bounds-dropped")
def _(client: httpx.Client) -> None:
    asked = ask("Give me a number", response_format={"type": "json_schema", "json_schema": {"name": "n", "schema": BOUNDED}})
    answer = json.loads(message(post(client, asked, "schema-bounds-dropped"))["content"])
    assert isinstance(answer.get("n"), int) and answer["n"] < 100  # the type holds, the bound does not


@effect("responses-output-off-schema")
def _(client: httpx.Client) -> None:
    asked = {"input": "Give me a number", "text": {"format": {"type": "json_schema", "name": "n", "schema": BOUNDED}}}
    assert not _off_schema(response_text(create(client, asked)))
    assert _off_schema(response_text(create(client, asked, "responses-output-off-schema")))
