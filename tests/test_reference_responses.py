"""The reference server's Responses API over real HTTP: validation, stored chains, the event stream, and what
each responses fault changes."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.reference import ReferenceServer
from lmconform.reference.store import (
    ENTRY_SIZE,
    HISTORY_ITEMS,
    MAX_BODY_BYTES,
    ResponseStore,
)

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    },
}
NESTED_WEATHER = {"type": "function", "function": {key: value for key, value in WEATHER.items() if key != "type"}}
TIME = {"type": "function", "name": "currentTime"}
WEATHER_ARGUMENTS = {"city": "Paris", "unit": "celsius"}
REMEMBER = "Please remember the word apple."
QUESTION = "What word did I ask you to remember?"


def ask(text: Any, **extra: Any) -> dict[str, Any]:
    return {"model": "test-model", "input": text, **extra}


TOOL_REQUEST = ask("What's the weather in Paris?", tools=[WEATHER])
TWO_CALLS = ask("What's the weather and the time in Paris?", tools=[WEATHER, TIME])
THINKING = ask("Hello there, friend", reasoning={"effort": "low"})


def post(client: httpx.Client, body: Any, fault: str | None = None) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}/v1/responses", json=body)


def create(client: httpx.Client, body: Any, fault: str | None = None) -> dict[str, Any]:
    response = post(client, body, fault)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def stream(client: httpx.Client, body: dict[str, Any], fault: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The events of a streamed response as (SSE event name, data)."""
    response = post(client, {**body, "stream": True}, fault)
    assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
    blocks = [block.splitlines() for block in response.text.split("\n\n") if block]
    assert all(len(lines) == 2 for lines in blocks)
    return [(lines[0].removeprefix("event: "), json.loads(lines[1].removeprefix("data: "))) for lines in blocks]


def types(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [data["type"] for _, data in events]


def of_type(events: list[tuple[str, dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    return [data for _, data in events if data["type"] == kind]


def text(response: dict[str, Any]) -> str:
    (message,) = [item for item in response["output"] if item["type"] == "message"]
    return message["content"][0]["text"]


def rejected(response: httpx.Response, param: str | None, code: str | None, message: str | None = None) -> None:
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["code"] == code
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    if message is not None:
        assert error["message"] == message


def not_found(previous_id: str) -> dict[str, Any]:
    return {"error": {"message": f"Previous response with id '{previous_id}' not found.",
                      "type": "invalid_request_error", "param": "previous_response_id",
                      "code": "previous_response_not_found"}}


# --- clean behaviour ---------------------------------------------------------------------------------------


def test_function_call(client: httpx.Client) -> None:
    body = create(client, TOOL_REQUEST)
    assert re.fullmatch(r"resp_[0-9a-f]+", body["id"]) and isinstance(body["created_at"], int)
    assert {key: body[key] for key in ("object", "status", "model", "previous_response_id", "tools", "tool_choice")} \
        == {"object": "response", "status": "completed", "model": "test-model", "previous_response_id": None,
            "tools": [{**WEATHER, "strict": None}], "tool_choice": "auto"}
    (call,) = body["output"]
    assert set(call) == {"id", "type", "call_id", "name", "arguments", "status"}
    assert call["id"].startswith("fc_") and re.fullmatch(r"call_\d+", call["call_id"])
    assert (call["type"], call["name"], call["status"]) == ("function_call", "get_weather", "completed")
    assert json.loads(call["arguments"]) == WEATHER_ARGUMENTS
    assert body["usage"] == {"input_tokens": 5, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 6}
    again = create(client, TOOL_REQUEST)
    assert again["id"] != body["id"] and again["output"][0]["call_id"] != call["call_id"]


def test_function_call_stream(client: httpx.Client) -> None:
    events = stream(client, TOOL_REQUEST)
    count = len(of_type(events, "response.function_call_arguments.delta"))
    assert count > 1 and types(events) == [
        "response.created", "response.in_progress", "response.output_item.added",
        *["response.function_call_arguments.delta"] * count,
        "response.function_call_arguments.done", "response.output_item.done", "response.completed"]
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert all(name == data["type"] for name, data in events)
    created = events[0][1]["response"]
    assert created["status"] == "in_progress" and created["output"] == [] and created["usage"] is None
    (added,) = of_type(events, "response.output_item.added")
    assert added["output_index"] == 0 and added["item"]["arguments"] == "" and added["item"]["status"] == "in_progress"
    deltas = of_type(events, "response.function_call_arguments.delta")
    assert all(delta["item_id"] == added["item"]["id"] and delta["output_index"] == 0 for delta in deltas)
    assert all(len(delta["delta"]) <= 8 for delta in deltas)
    (done,) = of_type(events, "response.function_call_arguments.done")
    (finished,) = of_type(events, "response.output_item.done")
    completed = events[-1][1]["response"]
    assert "".join(delta["delta"] for delta in deltas) == done["arguments"] == finished["item"]["arguments"] \
        == completed["output"][0]["arguments"]
    assert json.loads(done["arguments"]) == WEATHER_ARGUMENTS and done["name"] == "get_weather"
    assert finished["item"] == {**added["item"], "arguments": done["arguments"], "status": "completed"}
    assert completed["status"] == "completed" and completed["usage"]["total_tokens"] == 6
    assert client.get(f"/v1/responses/{completed['id']}").json() == completed


def test_reasoning_and_message_stream(client: httpx.Client) -> None:
    events = stream(client, THINKING)
    reasoning = len(of_type(events, "response.reasoning_text.delta"))
    words = len(of_type(events, "response.output_text.delta"))
    assert types(events) == [
        "response.created", "response.in_progress",
        "response.output_item.added", *["response.reasoning_text.delta"] * reasoning, "response.reasoning_text.done",
        "response.output_item.done",
        "response.output_item.added", "response.content_part.added", *["response.output_text.delta"] * words,
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed"]
    thought = "".join(delta["delta"] for delta in of_type(events, "response.reasoning_text.delta"))
    assert thought == of_type(events, "response.reasoning_text.done")[0]["text"] \
        == "Thinking about: Hello there, friend"
    said = "".join(delta["delta"] for delta in of_type(events, "response.output_text.delta"))
    assert said == of_type(events, "response.output_text.done")[0]["text"] == "You said: Hello there, friend"
    assert [added["output_index"] for added in of_type(events, "response.output_item.added")] == [0, 1]
    message = of_type(events, "response.output_item.done")[1]["item"]
    assert of_type(events, "response.content_part.added")[0]["part"] == {"type": "output_text", "text": "",
                                                                         "annotations": [], "logprobs": []}
    assert of_type(events, "response.content_part.done")[0]["part"] == message["content"][0]
    body = create(client, THINKING)
    reasoning_item, message_item = body["output"]
    assert reasoning_item["id"].startswith("rs_") and message_item["id"].startswith("msg_")
    assert {key: value for key, value in reasoning_item.items() if key != "id"} == {
        "type": "reasoning", "summary": [],
        "content": [{"type": "reasoning_text", "text": "Thinking about: Hello there, friend"}]}
    assert {key: value for key, value in message_item.items() if key != "id"} == {
        "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "You said: Hello there, friend", "annotations": [],
                     "logprobs": []}]}
    assert body["usage"]["output_tokens"] == 5 and body["usage"]["output_tokens_details"] == {"reasoning_tokens": 0}


def test_nested_tools_are_rejected(client: httpx.Client) -> None:
    response = post(client, ask("What's the weather in Paris?", tools=[WEATHER, NESTED_WEATHER]))
    assert response.status_code == 400
    assert response.json() == {"error": {"message": "Required", "type": "invalid_request_error",
                                         "param": "tools.1.name", "code": "invalid_type"}}


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        ([1, 2], None, "invalid_type"),
        ({"model": "x"}, "input", "invalid_type"),
        (ask(5), "input", "invalid_union"),
        (ask([]), "input", "too_small"),
        (ask([{"role": "robot", "content": "hi"}]), "input.0.role", "invalid_enum_value"),
        (ask([{"type": "message", "role": "user"}]), "input.0.content", "invalid_type"),
        (ask([{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]), "input.0.content.0.image_url",
         "invalid_value"),
        (ask([{"role": "user", "content": [{"type": "input_image", "detail": "low"}]}]), "input.0.content.0.image_url",
         "missing_required_parameter"),
        (ask([{"role": "user", "content": [{"type": "input_image", "file_id": "file-1", "detail": "tiny"}]}]),
         "input.0.content.0.detail", "invalid_enum_value"),
        (ask([{"role": "user", "content": [{"type": "input_file", "filename": "a.pdf"}]}]),
         "input.0.content.0.file_data", "missing_required_parameter"),
        (ask([{"role": "user", "content": [{"type": "input_file", "file_data": "JVBERi0="}]}]),
         "input.0.content.0.file_data", "invalid_value"),
        (ask([{"role": "user", "content": [{"type": "input_audio", "text": "x"}]}]), "input.0.content.0",
         "invalid_union"),
        (ask([{"type": "web_search_call"}]), "input.0.type", "invalid_union_discriminator"),
        (ask([{"type": "function_call_output", "output": "sunny"}]), "input.0.call_id", "invalid_type"),
        (ask(["hi"]), "input.0", "invalid_type"),
        (ask("hi", tools={"type": "function"}), "tools", "invalid_type"),
        (ask("hi", tools=[{"type": "function", "name": ""}]), "tools.0.name", "too_small"),
        (ask("hi", tools=[{"type": "retrieval", "name": "x"}]), "tools.0.type", "invalid_union_discriminator"),
        (ask("hi", tools=[{"type": "function", "name": "x", "parameters": []}]), "tools.0.parameters", "invalid_type"),
        (ask("hi", tool_choice="any"), "tool_choice", "invalid_union"),
        (ask("hi", tool_choice={"type": "function", "function": {"name": "x"}}), "tool_choice", "invalid_union"),
        (ask("hi", previous_response_id=5), "previous_response_id", "invalid_type"),
        (ask("hi", reasoning={"effort": "max"}), "reasoning.effort", "invalid_enum_value"),
        (ask("hi", store="no"), "store", "invalid_type"),
        (ask("hi", instructions=["be brief"]), "instructions", "invalid_type"),
    ],
)
def test_validation_errors(client: httpx.Client, body: Any, param: str | None, code: str) -> None:
    response = post(client, body)
    assert response.status_code == 400
    rejected(response, param, code)


def test_messages_in_every_accepted_form(client: httpx.Client) -> None:
    items = [{"role": "system", "content": "Be brief."},
             {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be kind."}]},
             {"role": "assistant", "content": [{"type": "output_text", "text": "Hi."}]},
             {"type": "reasoning", "id": "rs_1", "summary": []},
             {"role": "user", "content": [{"type": "input_text", "text": "Hello"},
                                          {"type": "input_text", "text": "you"}]}]
    body = create(client, ask(items, instructions="Answer.", tool_choice="auto"))
    assert text(body) == "You said: Hello you" and body["usage"]["input_tokens"] == 8
    forced = create(client, ask("Hello", tools=[WEATHER, TIME],
                                tool_choice={"type": "function", "name": "currentTime"}))
    assert [item["name"] for item in forced["output"]] == ["currentTime"]
    assert post(client, ask("Hello", reasoning={}, store=False, stream=False)).status_code == 200
    assert text(create(client, ask([{"type": "reasoning", "id": "rs_1", "summary": []}]))) == "You said: "


def test_an_image_or_a_file_is_taken_beside_the_text(client: httpx.Client) -> None:
    # The Open Responses templates image-input and file-input: a data: URL PNG or PDF beside the question; the model
    # reads the text.
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}
    body = create(client, ask([{"role": "user", "content": [{"type": "input_text", "text": "Hello"}, image]}]))
    assert text(body) == "You said: Hello"
    by_id = {"type": "input_image", "file_id": "file-1"}
    pdf = {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}
    for attached in (by_id, pdf):
        assert text(create(client, ask([{"role": "user", "content": [attached, {"type": "input_text", "text": "Hi"}]}]))) \
            == "You said: Hi"


def test_body_that_is_not_json(client: httpx.Client) -> None:
    response = client.post("/v1/responses", content=b'{"input": NaN}')
    assert response.status_code == 400
    rejected(response, None, None)


def test_unknown_previous_id(client: httpx.Client) -> None:
    response = post(client, ask("Hello", previous_response_id="resp_unknown"))
    assert response.status_code == 400 and response.json() == not_found("resp_unknown")


def test_a_chain_counts_its_history(client: httpx.Client) -> None:
    first = create(client, ask(REMEMBER))
    chained = create(client, ask("Hello there", previous_response_id=first["id"]))
    alone = create(client, ask("Hello there"))
    assert chained["previous_response_id"] == first["id"]
    assert chained["usage"]["input_tokens"] > alone["usage"]["input_tokens"] == 2
    assert chained["usage"]["input_tokens"] == first["usage"]["total_tokens"] + alone["usage"]["input_tokens"]
    instructed = create(client, ask("Hello there", previous_response_id=first["id"], instructions="Be brief."))
    assert instructed["usage"]["input_tokens"] == chained["usage"]["input_tokens"] + 2


def test_recall_through_a_chain(client: httpx.Client) -> None:
    first = create(client, ask(REMEMBER))
    between = create(client, ask("Nice weather today", previous_response_id=first["id"]))
    answer = create(client, ask(QUESTION, previous_response_id=between["id"]))
    assert text(answer) == 'You asked me to remember "apple".'
    assert text(create(client, ask(QUESTION))) == "I don't know which word you mean."
    streamed = stream(client, ask(QUESTION, previous_response_id=between["id"]))
    assert of_type(streamed, "response.output_text.done")[0]["text"] == 'You asked me to remember "apple".'
    unstored = create(client, ask("Remember the word pear.", previous_response_id=first["id"], store=False))
    assert client.get(f"/v1/responses/{unstored['id']}").status_code == 404
    assert post(client, ask(QUESTION, previous_response_id=unstored["id"])).json() == not_found(unstored["id"])


def test_forks_are_independent(client: httpx.Client) -> None:
    parent = create(client, ask(REMEMBER))
    child1 = create(client, ask("Remember the word banana.", previous_response_id=parent["id"]))
    child2 = create(client, ask(QUESTION, previous_response_id=parent["id"]))
    child3 = create(client, ask("Remember the word banana.", previous_response_id=parent["id"]))
    assert text(child2) == 'You asked me to remember "apple".'
    assert child3["usage"] == child1["usage"]
    assert text(create(client, ask(QUESTION, previous_response_id=child1["id"]))) == \
        'You asked me to remember "banana".'


def test_function_call_output_round_trip(client: httpx.Client) -> None:
    called = create(client, TOOL_REQUEST)
    call = called["output"][0]
    result = {"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}
    answer = create(client, ask([result], previous_response_id=called["id"]))
    assert text(answer) == "The get_weather tool returned: sunny"
    other = create(client, TOOL_REQUEST)
    for unanswerable in (ask([result], previous_response_id=other["id"]), ask([result])):
        response = post(client, unanswerable)
        assert response.status_code == 400
        rejected(response, "input", None)
    # A client that keeps its own history echoes the call instead of chaining.
    echoed = create(client, ask([{"role": "user", "content": "Weather in Paris?"}, call, result]))
    assert text(echoed) == "The get_weather tool returned: sunny"


def test_get_by_id(client: httpx.Client) -> None:
    body = create(client, THINKING)
    assert client.get(f"/v1/responses/{body['id']}").json() == body
    assert client.get(f"/faults/call-id-missing/v1/responses/{body['id']}").json() == body
    response = client.get("/v1/responses/resp_unknown")
    assert response.status_code == 404
    assert response.json() == {"error": {"message": "Response with id 'resp_unknown' not found.",
                                         "type": "invalid_request_error", "param": None, "code": None}}


def test_eviction_forgets_the_least_recently_used() -> None:
    with ReferenceServer(store_size=3) as small, httpx.Client(base_url=small.base_url, timeout=5) as http:
        ids = [create(http, ask(f"Turn {turn}"))["id"] for turn in range(4)]
        assert post(http, ask(QUESTION, previous_response_id=ids[0])).json() == not_found(ids[0])
        assert http.get(f"/v1/responses/{ids[0]}").status_code == 404
        assert http.get(f"/v1/responses/{ids[1]}").status_code == 200  # now the most recently used
        create(http, ask("Turn 4"))
        assert http.get(f"/v1/responses/{ids[2]}").status_code == 404
        assert all(http.get(f"/v1/responses/{kept}").status_code == 200 for kept in (ids[1], ids[3]))


def test_request_size_cap(client: httpx.Client) -> None:
    response = client.post("/v1/responses", content=json.dumps(ask("word " * (MAX_BODY_BYTES // 5))))
    assert response.status_code == 413
    rejected(response, None, "request_too_large")


def test_store_bounds_an_entry() -> None:
    store = ResponseStore(capacity=2)
    messages = [{"role": "user", "content": f"message {n}"} for n in range(HISTORY_ITEMS + 10)]
    store.add("resp_a", b"{}", messages, "resp_a")
    assert store.get("resp_a").history == tuple(messages[-HISTORY_ITEMS:])
    large = [{"role": "user", "content": "x" * (ENTRY_SIZE // 3)} for _ in range(3)]
    store.add("resp_b", b"{}", large, "resp_a")
    assert store.get("resp_b").history == tuple(large[1:])
    store.add("resp_c", b" " * (ENTRY_SIZE + 1), messages, "resp_c")
    assert store.get("resp_c") is None and store.get("resp_a") is not None
    assert store.newest_of_chain(store.get("resp_a")).history == tuple(large[1:])
    with pytest.raises(ValueError):
        ResponseStore(capacity=0)


# --- faults: each changes what it names -------------------------------------------------------------------

FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("nested-tools-accepted")
def _(client: httpx.Client) -> None:
    body = create(client, ask("What's the weather in Paris?", tools=[NESTED_WEATHER, TIME]), "nested-tools-accepted")
    assert text(body) == "You said: What's the weather in Paris?"
    assert body["tools"] == [{**TIME, "parameters": None, "strict": None}]
    assert create(client, TOOL_REQUEST, "nested-tools-accepted")["output"][0]["type"] == "function_call"


@effect("flattened-tools-rejected")
def _(client: httpx.Client) -> None:
    response = post(client, TOOL_REQUEST, "flattened-tools-rejected")
    assert response.status_code == 400
    assert response.json() == {"error": {"message": "Required", "type": "invalid_request_error",
                                         "param": "tools.0.function", "code": "invalid_type"}}
    assert post(client, ask("Hello"), "flattened-tools-rejected").status_code == 200


@effect("chain-ignored")
def _(client: httpx.Client) -> None:
    first = create(client, ask(REMEMBER))
    answer = create(client, ask(QUESTION, previous_response_id=first["id"]), "chain-ignored")
    assert text(answer) == "I don't know which word you mean." and answer["previous_response_id"] == first["id"]
    assert answer["usage"] == create(client, ask(QUESTION))["usage"]
    assert post(client, ask(QUESTION, previous_response_id="resp_unknown"), "chain-ignored").status_code == 400


@effect("unknown-previous-200")
def _(client: httpx.Client) -> None:
    body = create(client, ask("Hello there", previous_response_id="resp_unknown"), "unknown-previous-200")
    assert body["previous_response_id"] == "resp_unknown" and text(body) == "You said: Hello there"
    assert body["usage"] == create(client, ask("Hello there"))["usage"]


@effect("unknown-previous-404")
def _(client: httpx.Client) -> None:
    response = post(client, ask("Hello", previous_response_id="resp_unknown"), "unknown-previous-404")
    assert response.status_code == 404 and response.json() == not_found("resp_unknown")


@effect("previous-id-echo-wrong")
def _(client: httpx.Client) -> None:
    first = create(client, ask(REMEMBER))
    answer = create(client, ask(QUESTION, previous_response_id=first["id"]), "previous-id-echo-wrong")
    assert answer["previous_response_id"] is None and text(answer) == 'You asked me to remember "apple".'
    events = stream(client, ask(QUESTION, previous_response_id=first["id"]), "previous-id-echo-wrong")
    assert events[0][1]["response"]["previous_response_id"] is events[-1][1]["response"]["previous_response_id"] is None


@effect("fork-shares-state")
def _(client: httpx.Client) -> None:
    parent = create(client, ask(REMEMBER))
    child1 = create(client, ask("Remember the word banana.", previous_response_id=parent["id"]), "fork-shares-state")
    child2 = create(client, ask(QUESTION, previous_response_id=parent["id"]), "fork-shares-state")
    assert text(child2) == 'You asked me to remember "banana".'
    child3 = create(client, ask("Remember the word banana.", previous_response_id=parent["id"]), "fork-shares-state")
    assert child3["usage"]["input_tokens"] > child1["usage"]["input_tokens"]


@effect("function-call-output-rejected")
def _(client: httpx.Client) -> None:
    call = create(client, TOOL_REQUEST)
    result = {"type": "function_call_output", "call_id": call["output"][0]["call_id"], "output": "sunny"}
    response = post(client, ask([result], previous_response_id=call["id"]), "function-call-output-rejected")
    assert response.status_code == 400
    rejected(response, "input", "unsupported_value")
    assert post(client, ask("Hello"), "function-call-output-rejected").status_code == 200


@effect("call-id-missing")
def _(client: httpx.Client) -> None:
    (call,) = create(client, TOOL_REQUEST, "call-id-missing")["output"]
    assert "call_id" not in call and call["name"] == "get_weather"
    events = stream(client, TOOL_REQUEST, "call-id-missing")
    items = [data["item"] for data in of_type(events, "response.output_item.added") +
             of_type(events, "response.output_item.done")] + events[-1][1]["response"]["output"]
    assert len(items) == 3 and all("call_id" not in item and item["id"].startswith("fc_") for item in items)


@effect("events-out-of-order")
def _(client: httpx.Client) -> None:
    clean = types(stream(client, TOOL_REQUEST))
    events = stream(client, TOOL_REQUEST, "events-out-of-order")
    assert types(events) == [*clean[:2], clean[3], clean[2], *clean[4:]]
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))


@effect("no-response-completed")
def _(client: httpx.Client) -> None:
    clean = types(stream(client, THINKING))
    assert types(stream(client, THINKING, "no-response-completed")) == clean[:-1]


@effect("arguments-done-mismatch")
def _(client: httpx.Client) -> None:
    events = stream(client, TOOL_REQUEST, "arguments-done-mismatch")
    streamed = "".join(delta["delta"] for delta in of_type(events, "response.function_call_arguments.delta"))
    assert json.loads(streamed) == WEATHER_ARGUMENTS
    (done,) = of_type(events, "response.function_call_arguments.done")
    assert json.loads(done["arguments"]) == {**WEATHER_ARGUMENTS, "extra": True}
    assert of_type(events, "response.output_item.done")[0]["item"]["arguments"] == done["arguments"]
    assert events[-1][1]["response"]["output"][0]["arguments"] == done["arguments"]
    assert create(client, TOOL_REQUEST, "arguments-done-mismatch")["output"][0]["arguments"] == streamed


@effect("stream-item-ids-differ")
def _(client: httpx.Client) -> None:
    events = stream(client, TWO_CALLS, "stream-item-ids-differ")
    done = [data["item"] for data in of_type(events, "response.output_item.done")]
    final = events[-1][1]["response"]["output"]
    assert len(done) == len(final) == 2
    assert [(item["id"] + "_final", item["call_id"] + "_final") for item in done] == \
        [(item["id"], item["call_id"]) for item in final]
    clean = stream(client, TWO_CALLS)
    assert [data["item"] for data in of_type(clean, "response.output_item.done")] == clean[-1][1]["response"]["output"]


@effect("arguments-done-missing")
def _(client: httpx.Client) -> None:
    clean = stream(client, TOOL_REQUEST)
    events = stream(client, TOOL_REQUEST, "arguments-done-missing")
    assert types(events) == [kind for kind in types(clean) if kind != "response.function_call_arguments.done"]
    (done,) = of_type(events, "response.output_item.done")
    assert done["item"]["arguments"] == of_type(clean, "response.output_item.done")[0]["item"]["arguments"]


@effect("duplicate-output-index")
def _(client: httpx.Client) -> None:
    def indexes(events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        return [data["output_index"] for _, data in events if "output_index" in data]

    two_items = stream(client, THINKING, "duplicate-output-index")
    assert types(two_items) == types(stream(client, THINKING)) and set(indexes(two_items)) == {0}
    # With a single item there is no second index to repeat.
    assert indexes(stream(client, TOOL_REQUEST, "duplicate-output-index")) == indexes(stream(client, TOOL_REQUEST))


@effect("sequence-not-increasing")
def _(client: httpx.Client) -> None:
    numbers = [data["sequence_number"] for _, data in stream(client, TOOL_REQUEST, "sequence-not-increasing")]
    assert numbers == [0, 1, 1, *range(3, len(numbers))]


@effect("sequence-number-missing")
def _(client: httpx.Client) -> None:
    events = stream(client, THINKING, "sequence-number-missing")
    assert types(events) == types(stream(client, THINKING))
    assert all("sequence_number" not in data for _, data in events)


@effect("event-field-mismatch")
def _(client: httpx.Client) -> None:
    events = stream(client, TWO_CALLS, "event-field-mismatch")
    deltas = [name for name, data in events if data["type"].endswith(".delta")]
    assert deltas and set(deltas) == {"message"}
    assert all(name == data["type"] for name, data in events if not data["type"].endswith(".delta"))


@effect("store-false-ignored")
def _(client: httpx.Client) -> None:
    unstored = create(client, ask(REMEMBER, store=False), "store-false-ignored")
    assert client.get(f"/v1/responses/{unstored['id']}").json()["id"] == unstored["id"]
    assert create(client, ask(QUESTION, previous_response_id=unstored["id"]))["previous_response_id"] == unstored["id"]
    clean = create(client, ask(REMEMBER, store=False))
    assert client.get(f"/v1/responses/{clean['id']}").status_code == 404


@effect("delete-keeps-response")
def _(client: httpx.Client) -> None:
    kept = create(client, ask(REMEMBER))
    deleted = client.delete(f"/faults/delete-keeps-response/v1/responses/{kept['id']}").json()
    assert deleted == {"id": kept["id"], "object": "response", "deleted": True}
    assert client.get(f"/v1/responses/{kept['id']}").status_code == 200
    assert client.delete(f"/v1/responses/{kept['id']}").status_code == 200
    assert client.get(f"/v1/responses/{kept['id']}").status_code == 404
    assert post(client, ask(QUESTION, previous_response_id=kept["id"])).json()["error"]["code"] \
        == "previous_response_not_found"


@effect("deletion-bare")
def _(client: httpx.Client) -> None:
    kept = create(client, ask(REMEMBER))
    assert client.delete(f"/faults/deletion-bare/v1/responses/{kept['id']}").json() == {}
    assert client.get(f"/v1/responses/{kept['id']}").status_code == 404


@effect("input-items-empty")
def _(client: httpx.Client) -> None:
    kept = create(client, ask(REMEMBER))
    listed = client.get(f"/v1/responses/{kept['id']}/input_items").json()
    assert [part["text"] for item in listed["data"] for part in item["content"]] == [REMEMBER]
    assert listed["first_id"] == listed["data"][0]["id"] and listed["has_more"] is False
    assert client.get(f"/faults/input-items-empty/v1/responses/{kept['id']}/input_items").json()["data"] == []


@effect("stream-stored-as-created")
def _(client: httpx.Client) -> None:
    events = stream(client, ask(REMEMBER), "stream-stored-as-created")
    finished = of_type(events, "response.completed")[0]["response"]
    stored = client.get(f"/v1/responses/{finished['id']}").json()
    assert stored["status"] == "in_progress" and stored["output"] == [] and finished["output"]
    events = stream(client, ask(REMEMBER))
    finished = of_type(events, "response.completed")[0]["response"]
    assert client.get(f"/v1/responses/{finished['id']}").json() == finished


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


def test_the_store_stays_bounded_past_its_capacity() -> None:
    """More responses than the cap: memory stops growing once the store is full, within the documented per-entry
    bound, and the evicted ids answer previous_response_not_found."""
    import gc
    import tracemalloc

    from lmconform.reference.store import ENTRY_SIZE

    capacity, prompt = 20, "lorem " * 1500  # ~9 KB of input per response
    with ReferenceServer(store_size=capacity) as small, httpx.Client(base_url=small.base_url, timeout=10) as http:
        def create(count: int) -> list[str]:
            return [http.post("/v1/responses", json={"input": f"{prompt} {n}"}).json()["id"] for n in range(count)]

        def live() -> int:  # what is held, not cyclic garbage the collector has not reached yet
            gc.collect()
            return tracemalloc.get_traced_memory()[0]

        tracemalloc.start()
        try:
            first = create(capacity)  # the store is now full
            full = live()
            create(10 * capacity)  # ten times over: every new entry evicts an old one
            after = live()
        finally:
            tracemalloc.stop()
        # Growth after the store is full is noise, not entries: far below even one documented entry budget.
        assert after - full < ENTRY_SIZE, f"{after - full} bytes more after {10 * capacity} further responses"
        answer = http.post("/v1/responses", json={"input": "Continue.", "previous_response_id": first[0]})
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "previous_response_not_found"
