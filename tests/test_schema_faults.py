"""The faults that prove the schema checks, each over real HTTP: it changes the one member it names, and the
answer's schema then fails at the level it grades that member."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.schemas import validate
from lmconform.vocabulary import Level

CHAT = {"model": "m", "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]}
RESPONSES = {"model": "m", "input": "Calculate 2+2 using the calculate tool", "tools": [
    {"type": "function", "name": "calculate", "parameters": {"type": "object"}}]}
MESSAGES = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello to Alan Turing."}]}
NATIVE_CHAT = {"model": "m", "input": "Use the get_time tool: what time is it in Tokyo?",
               "integrations": [{"type": "plugin", "id": "mcp/lmconform"}]}


def chat(client: httpx.Client, fault: str | None, **extra: Any) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}/v1/chat/completions", json={**CHAT, **extra})


def responses(client: httpx.Client, fault: str | None, body: Any = None, **extra: Any) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}/v1/responses", json={**(body or RESPONSES), **extra})


def messages(client: httpx.Client, fault: str | None, **extra: Any) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}/v1/messages", json={**MESSAGES, **extra})


def native_chat(client: httpx.Client, fault: str | None, **extra: Any) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}/api/v1/chat", json={**NATIVE_CHAT, **extra})


def payloads(response: httpx.Response) -> list[dict[str, Any]]:
    """A stream's JSON payloads, or the body alone."""
    if response.headers["content-type"].startswith("text/event-stream"):
        lines = [line for line in response.text.splitlines() if line.startswith("data: ")]
        return [json.loads(line[6:]) for line in lines if line != "data: [DONE]"]
    return [response.json()]


def levels(api: str, kind: str, found: list[dict[str, Any]], profile: str = "reference") -> set[tuple[str, Level]]:
    return {(finding.pointer, finding.level) for payload in found
            for finding in validate(api, kind, payload, profile)}


FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("created-not-integer")
def _(client: httpx.Client) -> None:
    stream = payloads(chat(client, "created-not-integer", stream=True))
    assert all(isinstance(chunk["created"], str) and chunk["created"].isdigit() for chunk in stream)
    assert levels("chat", "event", stream) == {("/created", Level.SHOULD)}
    assert levels("chat", "body", payloads(chat(client, "created-not-integer"))) == {("/created", Level.SHOULD)}


@effect("usage-token-counts-strings")
def _(client: httpx.Client) -> None:
    body = chat(client, "usage-token-counts-strings").json()
    usage = body["usage"]
    assert usage["total_tokens"] == str(int(usage["prompt_tokens"]) + int(usage["completion_tokens"]))
    stream = payloads(chat(client, "usage-token-counts-strings", stream=True, stream_options={"include_usage": True}))
    assert {pointer for pointer, level in levels("chat", "event", stream) if level is Level.SHOULD} == \
        {"/usage/prompt_tokens", "/usage/completion_tokens", "/usage/total_tokens"}


@effect("chunk-delta-missing")
def _(client: httpx.Client) -> None:
    stream = payloads(chat(client, "chunk-delta-missing", stream=True))
    finishing = [chunk for chunk in stream if chunk["choices"][0]["finish_reason"]]
    assert len(finishing) == 1 and "delta" not in finishing[0]["choices"][0]
    assert all("delta" in chunk["choices"][0] for chunk in stream if chunk not in finishing)
    assert levels("chat", "event", stream) == {("/choices/0/delta", Level.MUST)}


@effect("chat-null-members-omitted")
def _(client: httpx.Client) -> None:
    body = chat(client, "chat-null-members-omitted").json()
    assert "refusal" not in body["choices"][0]["message"] and "logprobs" not in body["choices"][0]
    assert {level for _, level in levels("chat", "body", [body])} == {Level.INFO}
    stream = payloads(chat(client, "chat-null-members-omitted", stream=True))
    assert not any(value is None for chunk in stream for value in chunk["choices"][0].values())
    assert {level for _, level in levels("chat", "event", stream)} == {Level.INFO}


@effect("response-output-missing")
def _(client: httpx.Client) -> None:
    body = responses(client, "response-output-missing").json()
    assert "output" not in body and body["object"] == "response"
    assert levels("responses", "body", [body]) == {("/output", Level.MUST)}
    streamed = payloads(responses(client, "response-output-missing", stream=True))
    assert "output" in streamed[-1]["response"]


@effect("event-item-id-missing")
def _(client: httpx.Client) -> None:
    events = payloads(responses(client, "event-item-id-missing", stream=True))
    assert not any("item_id" in event for event in events)
    assert any(event["type"] == "response.function_call_arguments.delta" for event in events)
    found = {finding.level for event in events for finding in validate("responses", "event", event, "reference")}
    assert found == {Level.MUST, Level.SHOULD}


@effect("usage-details-missing")
def _(client: httpx.Client) -> None:
    body = responses(client, "usage-details-missing").json()
    assert set(body["usage"]) == {"input_tokens", "output_tokens", "output_tokens_details", "total_tokens"}
    assert levels("responses", "body", [body]) == {("/usage/input_tokens_details", Level.SHOULD)}


@effect("response-null-members-omitted")
def _(client: httpx.Client) -> None:
    body = responses(client, "response-null-members-omitted").json()
    assert not {"error", "incomplete_details", "previous_response_id"} & set(body)
    assert {level for _, level in levels("responses", "body", [body])} == {Level.INFO}


def refused(client: httpx.Client, fault: str) -> dict[str, Any]:
    response = responses(client, fault, {"model": "m"})
    assert response.status_code == 400
    return response.json()


@effect("error-message-missing")
def _(client: httpx.Client) -> None:
    body = refused(client, "error-message-missing")
    assert body == {"error": {"type": "invalid_request_error", "param": "input", "code": "invalid_type"}}
    assert levels("responses", "error", [body]) == {("/error/message", Level.MUST)}


@effect("error-type-missing")
def _(client: httpx.Client) -> None:
    body = refused(client, "error-type-missing")
    assert "type" not in body["error"] and body["error"]["message"] == "Required"
    assert levels("responses", "error", [body]) == {("/error/type", Level.SHOULD)}


@effect("error-param-missing")
def _(client: httpx.Client) -> None:
    body = refused(client, "error-param-missing")
    assert "param" not in body["error"] and body["error"]["message"] == "Required"
    assert levels("responses", "error", [body]) == {("/error/param", Level.INFO)}


def models(client: httpx.Client, fault: str) -> dict[str, Any]:
    return client.get(f"/faults/{fault}/v1/models").json()


@effect("model-object-missing")
def _(client: httpx.Client) -> None:
    body = models(client, "model-object-missing")
    assert body["object"] == "list" and all("object" not in model for model in body["data"])
    assert levels("models", "body", [body]) == {("/data/0/object", Level.MUST)}


@effect("model-owned-by-missing")
def _(client: httpx.Client) -> None:
    body = models(client, "model-owned-by-missing")
    assert all(set(model) == {"id", "object", "max_context_length"} for model in body["data"])
    assert levels("models", "body", [body]) == {("/data/0/owned_by", Level.SHOULD)}


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


# Faults of the Messages and native chat modules that prove these APIs' schema checks at the levels no other fault
# reaches.

def test_a_null_stop_sequence_left_out_is_info_in_the_message_and_in_its_stream(client: httpx.Client) -> None:
    body = messages(client, "messages-stop-sequence-omitted").json()
    assert "stop_sequence" not in body and body["stop_reason"] == "end_turn"
    assert levels("messages", "body", [body]) == {("/stop_sequence", Level.INFO)}
    stream = payloads(messages(client, "messages-stop-sequence-omitted", stream=True))
    assert levels("messages", "event", stream) == {("/message/stop_sequence", Level.INFO),
                                                    ("/delta/stop_sequence", Level.INFO)}
    ended = messages(client, "messages-stop-sequence-omitted", stop_sequences=["Turing"]).json()
    assert ended["stop_sequence"] == "Turing"  # a stop sequence that ended the answer is said


def test_tool_calls_without_provider_info_are_should_in_the_result_and_in_its_stream(client: httpx.Client) -> None:
    body = native_chat(client, "native-provider-info-missing").json()
    calls = [item for item in body["output"] if item["type"] == "tool_call"]
    assert calls and not any("provider_info" in call for call in calls)
    assert levels("native_chat", "body", [body]) == {("/output/0/provider_info", Level.SHOULD)}
    stream = payloads(native_chat(client, "native-provider-info-missing", stream=True))
    assert [event["type"] for event in stream if event["type"].startswith("tool_call.")] == \
        ["tool_call.start", "tool_call.arguments", "tool_call.success"]
    assert {level for _, level in levels("native_chat", "event", stream)} == {Level.SHOULD}
    assert not any("provider_info" in event for event in stream)


@pytest.mark.parametrize("api", ["chat", "responses", "messages", "native_chat"])
def test_without_a_fault_the_same_answers_have_no_finding(client: httpx.Client, api: str) -> None:
    send = {"chat": chat, "responses": responses, "messages": messages, "native_chat": native_chat}[api]
    assert levels(api, "event", payloads(send(client, None, stream=True))) == set()
    assert levels(api, "body", payloads(send(client, None))) == set()
