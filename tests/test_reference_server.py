"""The reference server over real HTTP: its clean behaviour, its error bodies, and what each fault changes."""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import processes
import pytest
from fault_effects import FaultEffects

from lmconform.api_table import APIS
from lmconform.command_line import SECONDS, bounded
from lmconform.reference import FAULTS, ReferenceServer, create_app, parse_faults

pytestmark = pytest.mark.waits

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 3},
                "detailed": {"type": "boolean"},
                "hours": {"type": "array", "items": {"type": "number"}},
            },
        },
    },
}
TIME = {"type": "function", "function": {"name": "currentTime"}}
WEATHER_ARGUMENTS = {"city": "Paris", "unit": "celsius", "days": 3, "detailed": True, "hours": [1.5]}


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "test-model", "messages": [{"role": "user", "content": text}], **extra}


TOOL_REQUEST = ask("What's the weather in Paris?", tools=[WEATHER], stream=True)
TWO_CALLS = ask("What's the weather and the time in Paris?", tools=[WEATHER, TIME], stream=True)
TEXT_REQUEST = ask("Hello there, friend", stream=True)


def post(client: httpx.Client, body: Any, fault: str | None = None) -> httpx.Response:
    prefix = f"/faults/{fault}" if fault else ""
    return client.post(f"{prefix}/v1/chat/completions", json=body)


def data_lines(response: httpx.Response) -> list[str]:
    events = response.content.decode("utf-8", errors="replace").split("\n\n")
    return [line.removeprefix("data: ") for event in events for line in event.splitlines() if line.startswith("data: ")]


def chunks(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(data) for data in data_lines(response) if data != "[DONE]"]


def deltas(response: httpx.Response) -> list[dict[str, Any]]:
    return [chunk["choices"][0]["delta"] for chunk in chunks(response) if chunk["choices"]]


def tool_entries(response: httpx.Response) -> list[dict[str, Any]]:
    return [entry for delta in deltas(response) for entry in delta.get("tool_calls", [])]


def finish_reasons(response: httpx.Response) -> list[str | None]:
    return [chunk["choices"][0]["finish_reason"] for chunk in chunks(response) if chunk["choices"]]


def arguments_by_index(response: httpx.Response) -> dict[int, str]:
    joined: dict[int, str] = {}
    for entry in tool_entries(response):
        joined[entry["index"]] = joined.get(entry["index"], "") + entry["function"].get("arguments", "")
    return joined


def without_created(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in item.items() if key != "created"} for item in items]


# --- clean behaviour ---------------------------------------------------------------------------------------


def test_tool_call_stream(client: httpx.Client) -> None:
    response = post(client, {**TOOL_REQUEST, "stream_options": {"include_usage": True}})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert data_lines(response)[-1] == "[DONE]"
    parsed = chunks(response)
    assert {chunk["id"] for chunk in parsed} == {parsed[0]["id"]} and parsed[0]["id"].startswith("chatcmpl-")
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in parsed)
    assert all(chunk["model"] == chunk["system_fingerprint"] == "test-model" for chunk in parsed)
    assert parsed[0]["choices"] == [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                     "logprobs": None, "finish_reason": None}]
    first, *rest = tool_entries(response)
    assert first["index"] == 0 and first["type"] == "function"
    assert first["function"] == {"name": "get_weather", "arguments": ""}
    assert len(first["id"]) == 9 and first["id"].isdigit()
    assert len(rest) > 1 and all(set(entry) == {"index", "function"} for entry in rest)
    assert all(len(entry["function"]["arguments"]) <= 8 for entry in rest)
    assert json.loads(arguments_by_index(response)[0]) == WEATHER_ARGUMENTS
    assert finish_reasons(response)[-1] == "tool_calls"
    assert parsed[-2]["choices"][0]["delta"] == {}
    assert parsed[-1]["choices"] == [] and parsed[-1]["usage"]["total_tokens"] == 6


def test_parallel_calls_and_parallel_tool_calls_false(client: httpx.Client) -> None:
    names = [entry["function"]["name"] for entry in tool_entries(post(client, TWO_CALLS)) if "id" in entry]
    assert names == ["get_weather", "currentTime"]
    assert json.loads(arguments_by_index(post(client, TWO_CALLS))[1]) == {}
    single = post(client, {**TWO_CALLS, "parallel_tool_calls": False})
    assert [entry["function"]["name"] for entry in tool_entries(single) if "id" in entry] == ["get_weather"]


def test_tool_choice_rules(client: httpx.Client) -> None:
    unrelated = ask("Hello", tools=[WEATHER, TIME])
    assert post(client, unrelated).json()["choices"][0]["message"]["content"] == "You said: Hello"
    required = post(client, {**unrelated, "tool_choice": "required"}).json()["choices"][0]
    assert [call["function"]["name"] for call in required["message"]["tool_calls"]] == ["get_weather"]
    none = post(client, {**TOOL_REQUEST, "stream": False, "tool_choice": "none"}).json()["choices"][0]
    assert none["finish_reason"] == "stop" and "tool_calls" not in none["message"]


def test_text_stream(client: httpx.Client) -> None:
    response = post(client, TEXT_REQUEST)
    contents = [delta["content"] for delta in deltas(response)[1:] if "content" in delta]
    assert len(contents) > 1 and "".join(contents) == "You said: Hello there, friend"
    assert finish_reasons(response)[-1] == "stop"
    assert all(chunk["choices"] for chunk in chunks(response))  # no usage chunk unless asked


def test_tool_result_is_answered_as_text(client: httpx.Client) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "123456789", "type": "function",
                         "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "123456789", "content": "sunny"},
    ]
    choice = post(client, {"messages": messages, "tools": [WEATHER]}).json()["choices"][0]
    assert choice["message"]["content"] == "The get_weather tool returned: sunny"
    assert choice["finish_reason"] == "stop"


def test_non_stream_body(client: httpx.Client) -> None:
    response = post(client, {**TOOL_REQUEST, "stream": False})
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["object"] == "chat.completion" and body["model"] == body["system_fingerprint"] == "test-model"
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["logprobs"] is None
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and len(call["id"]) == 9 and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == WEATHER_ARGUMENTS
    assert body["usage"] == {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    # Streamed or not, the same request gets the same ids.
    assert call["id"] == tool_entries(post(client, TOOL_REQUEST))[0]["id"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "Request body must be a JSON object"),
        ({"model": "x"}, "'messages' field is required"),
        ({"messages": []}, "'messages' must be a non-empty array"),
        ({"messages": [{"role": "robot", "content": "hi"}]},
         "'messages[0].role' must be one of: system, user, assistant, tool, developer"),
        ({"messages": ["hi"]}, "'messages[0].role' must be one of: system, user, assistant, tool, developer"),
        (ask("hi", tools={"type": "function"}), "'tools' must be an array"),
        (ask("hi", tools=[{"type": "function", "name": "flat"}]), "Invalid 'tools[0]': 'function' must be an object"),
        (ask("hi", tools=[{"type": "function", "function": {"name": ""}}]),
         "Invalid 'tools[0]': 'function.name' must be a non-empty string"),
        (ask("hi", tools=[{"type": "retrieval", "function": {"name": "x"}}]),
         "Invalid 'tools[0]': 'type' must be 'function'"),
        (ask("hi", tools=[{"type": "function", "function": {"name": "x", "parameters": []}}]),
         "Invalid 'tools[0]': 'function.parameters' must be an object"),
        (ask("hi", tool_choice="any"),
         "Invalid tool_choice value: 'any'. Supported string values: none, auto, required"),
        (ask("hi", tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "get_weather"}}),
         "Invalid tool_choice type: 'object'. Supported string values: none, auto, required"),
    ],
)
def test_validation_errors(client: httpx.Client, body: Any, message: str) -> None:
    response = post(client, body)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": message}


@pytest.mark.parametrize("content", [b"{not json", b'{"messages": NaN}', b"\xff"])
def test_body_that_is_not_json(client: httpx.Client, content: bytes) -> None:
    response = client.post("/v1/chat/completions", content=content)
    assert response.status_code == 400 and response.json() == {"error": "Request body must be a JSON object"}


def test_unknown_route_answers_404_in_lm_studios_words_as_an_openai_error(client: httpx.Client) -> None:
    response = client.post("/chat/completions", json={})
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "Unexpected endpoint or method. (POST /chat/completions)"
    response = client.delete("/faults/stall/v1/models")
    assert response.status_code == 404
    assert response.json()["error"] == {"message": "Unexpected endpoint or method. (DELETE /v1/models)",
                                        "type": "invalid_request_error", "param": None, "code": "not_found"}
    response = client.get("/faults/unknown-route-200/v1/nothing")
    assert response.status_code == 200
    assert response.json() == {"error": "Unexpected endpoint or method. (GET /v1/nothing)"}


def test_models(client: httpx.Client) -> None:
    model = {"id": "lmconform-reference", "object": "model", "owned_by": "organization_owner",
             "max_context_length": 7168}
    expected = {"object": "list", "data": [model]}
    assert client.get("/v1/models").json() == expected
    assert client.get("/faults/stall,no-done/v1/models").json() == expected


def test_unknown_fault_prefix(client: httpx.Client) -> None:
    response = client.get("/faults/no-done,bogus/v1/models")
    assert response.status_code == 404
    assert response.json()["error"] == "unknown fault 'bogus'; `lmconform faults` lists them"


def test_parse_faults() -> None:
    assert parse_faults(["stall", "no-done"]) == {"stall", "no-done"}
    with pytest.raises(ValueError, match="^unknown fault 'x'; `lmconform faults` lists them$"):
        parse_faults(["x"])
    # A slip of the keyboard is named, in one short line rather than the catalogue's two hundred names.
    with pytest.raises(ValueError, match=r"^unknown fault 'tool-index-on' \(did you mean 'tool-index-one'\?\); "):
        parse_faults(["tool-index-on"])
    with pytest.raises(ValueError):
        create_app(frozenset({"x"}))


def test_catalogue_is_described() -> None:
    for name, fault in FAULTS.items():
        assert fault.name == name and fault.api in (*APIS, "http")
        assert fault.summary and "\n" not in fault.summary and fault.seen_in


def test_startup_faults_and_per_request_faults_together() -> None:
    with ReferenceServer(faults=["tool-index-one"]) as running:
        response = httpx.post(f"{running.base_url}/v1/chat/completions", json=TOOL_REQUEST)
        assert tool_entries(response)[0]["index"] == 1
        assert httpx.get(f"{running.base_url}/faults/models-missing/v1/models").status_code == 404


def test_stop_while_a_stream_is_stalled() -> None:
    running = ReferenceServer().start()
    with httpx.Client(timeout=httpx.Timeout(5, read=5)) as http, \
            http.stream("POST", f"{running.base_url}/faults/stall/v1/chat/completions", json=TEXT_REQUEST) as response:
        assert b"data: " in next(response.iter_raw())
        began = time.monotonic()
        running.stop()
        # Not a speed goal: the stall lasts 10 minutes, and stopping must not wait for it.
        assert time.monotonic() - began < 60


# --- faults: each changes what it names -------------------------------------------------------------------

FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("tool-index-missing")
def _(client: httpx.Client) -> None:
    assert all("index" not in entry for entry in tool_entries(post(client, TOOL_REQUEST, "tool-index-missing")))


@effect("tool-index-one")
def _(client: httpx.Client) -> None:
    response = post(client, TWO_CALLS, "tool-index-one")
    assert sorted({entry["index"] for entry in tool_entries(response)}) == [1, 2]
    assert json.loads(arguments_by_index(response)[1]) == WEATHER_ARGUMENTS


@effect("arguments-object")
def _(client: httpx.Client) -> None:
    entries = tool_entries(post(client, TOOL_REQUEST, "arguments-object"))
    assert len(entries) == 1 and entries[0]["function"]["arguments"] == WEATHER_ARGUMENTS
    message = post(client, {**TOOL_REQUEST, "stream": False}, "arguments-object").json()["choices"][0]["message"]
    assert message["tool_calls"][0]["function"]["arguments"] == WEATHER_ARGUMENTS


@effect("id-name-repeated")
def _(client: httpx.Client) -> None:
    entries = tool_entries(post(client, TOOL_REQUEST, "id-name-repeated"))
    assert len(entries) > 2 and len({entry["id"] for entry in entries}) == 1
    assert all(entry["type"] == "function" and entry["function"]["name"] == "get_weather" for entry in entries)
    assert json.loads("".join(entry["function"]["arguments"] for entry in entries)) == WEATHER_ARGUMENTS


@effect("arguments-invalid-json")
def _(client: httpx.Client) -> None:
    clean = json.dumps(WEATHER_ARGUMENTS, separators=(",", ":"))
    assert arguments_by_index(post(client, TOOL_REQUEST, "arguments-invalid-json"))[0] == clean[1:]
    message = post(client, {**TOOL_REQUEST, "stream": False}, "arguments-invalid-json").json()["choices"][0]["message"]
    assert message["tool_calls"][0]["function"]["arguments"] == clean[1:]


@effect("arguments-cumulative")
def _(client: httpx.Client) -> None:
    entries = tool_entries(post(client, TOOL_REQUEST, "arguments-cumulative"))
    pieces = [entry["function"]["arguments"] for entry in entries]
    assert json.loads(pieces[-1]) == WEATHER_ARGUMENTS
    assert all(later.startswith(earlier) for earlier, later in zip(pieces[1:], pieces[2:], strict=False))


@effect("two-calls-one-index")
def _(client: httpx.Client) -> None:
    entries = tool_entries(post(client, TWO_CALLS, "two-calls-one-index"))
    assert {entry["index"] for entry in entries} == {0}
    openings = [entry for entry in entries if "id" in entry]
    assert [entry["function"]["name"] for entry in openings] == ["get_weather", "currentTime"]
    assert len({entry["id"] for entry in openings}) == 2


@effect("tool-calls-interleaved")
def _(client: httpx.Client) -> None:
    response = post(client, TWO_CALLS, "tool-calls-interleaved")
    order = [entry["index"] for entry in tool_entries(response)]
    assert order[:4] == [0, 1, 0, 1]
    clean = arguments_by_index(post(client, TWO_CALLS))
    assert arguments_by_index(response) == clean


@effect("type-null-continuation")
def _(client: httpx.Client) -> None:
    first, *rest = tool_entries(post(client, TOOL_REQUEST, "type-null-continuation"))
    assert first["type"] == "function" and rest and all(entry["type"] is None for entry in rest)


@effect("empty-response")
def _(client: httpx.Client) -> None:
    response = post(client, TOOL_REQUEST, "empty-response")
    assert deltas(response) == [{"role": "assistant", "content": ""}, {}]
    assert finish_reasons(response) == [None, "stop"] and data_lines(response)[-1] == "[DONE]"
    message = post(client, {**TEXT_REQUEST, "stream": False}, "empty-response").json()["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "", "refusal": None}


@effect("json-instead-of-sse")
def _(client: httpx.Client) -> None:
    response = post(client, TOOL_REQUEST, "json-instead-of-sse")
    assert response.headers["content-type"] == "application/json"
    assert response.json()["object"] == "chat.completion"
    assert post(client, TEXT_REQUEST, "json-instead-of-sse").headers["content-type"] == "text/event-stream"


@effect("no-done")
def _(client: httpx.Client) -> None:
    lines = data_lines(post(client, TEXT_REQUEST, "no-done"))
    assert "[DONE]" not in lines and json.loads(lines[-1])["choices"][0]["finish_reason"] == "stop"


@effect("finish-stop-after-tools")
def _(client: httpx.Client) -> None:
    response = post(client, TOOL_REQUEST, "finish-stop-after-tools")
    assert tool_entries(response) and finish_reasons(response)[-1] == "stop"
    body = post(client, {**TOOL_REQUEST, "stream": False}, "finish-stop-after-tools").json()
    assert body["choices"][0]["finish_reason"] == "stop"


@effect("chunk-not-json")
def _(client: httpx.Client) -> None:
    lines = data_lines(post(client, TEXT_REQUEST, "chunk-not-json"))
    assert lines[1] == "processing..." and lines[-1] == "[DONE]"
    # The rest is the clean answer's, but for `created`: a time in seconds, which two answers may fall either side of.
    rest, clean = ([json.loads(line) for line in part if line != "[DONE]"]
                   for part in (lines[2:], data_lines(post(client, TEXT_REQUEST))[1:]))
    assert without_created(rest) == without_created(clean)


@effect("server-error-on-bad-input")
def _(client: httpx.Client) -> None:
    response = post(client, ask("hi", tool_choice={"type": "function"}), "server-error-on-bad-input")
    assert response.status_code == 500 and response.text == "Internal Server Error"
    assert response.headers["content-type"].startswith("text/plain")
    assert post(client, TEXT_REQUEST, "server-error-on-bad-input").status_code == 200


@effect("models-context-length-string")
def _(client: httpx.Client) -> None:
    (model,) = client.get("/faults/models-context-length-string/v1/models").json()["data"]
    assert model["max_context_length"] == "7168"


@effect("models-missing")
def _(client: httpx.Client) -> None:
    response = client.get("/faults/models-missing/v1/models")
    assert response.status_code == 404 and response.text == "Not Found"
    assert response.headers["content-type"].startswith("text/plain")


@effect("data-after-done")
def _(client: httpx.Client) -> None:
    lines = data_lines(post(client, TEXT_REQUEST, "data-after-done"))
    assert lines[-2] == "[DONE]" and json.loads(lines[-1])["object"] == "chat.completion.chunk"


@effect("invalid-utf8")
def _(client: httpx.Client) -> None:
    response = post(client, TEXT_REQUEST, "invalid-utf8")
    assert b"\n\n: \xff\xfe keep-alive\n\n" in response.content
    assert without_created(chunks(response)) == without_created(chunks(post(client, TEXT_REQUEST)))


@effect("body-too-large")
def _(client: httpx.Client) -> None:
    received = bytearray()
    with client.stream("POST", "/faults/body-too-large/v1/chat/completions", json=TEXT_REQUEST) as response:
        for piece in response.iter_raw():
            received += piece
            if len(received) > 2 << 20:
                break
    assert all(line.startswith(b":") for line in bytes(received).splitlines()[:-1])


@effect("stall")
def _(client: httpx.Client) -> None:
    received = b""
    # The read timeout is both the wait for the first event and the proof of the stall: long enough that a busy
    # machine still delivers the first event within it.
    with client.stream("POST", "/faults/stall/v1/chat/completions", json=TEXT_REQUEST,
                       timeout=httpx.Timeout(5, read=5)) as response:
        pieces = response.iter_raw()
        while b"\n\n" not in received:
            received += next(pieces)
        assert json.loads(received.decode().removeprefix("data: "))["choices"][0]["delta"]["role"] == "assistant"
        with pytest.raises(httpx.ReadTimeout):
            next(pieces)


@effect("tool-id-missing")
def _(client: httpx.Client) -> None:
    first = tool_entries(post(client, TOOL_REQUEST, "tool-id-missing"))[0]
    assert "id" not in first and first["function"]["name"] == "get_weather"
    message = post(client, {**TOOL_REQUEST, "stream": False}, "tool-id-missing").json()["choices"][0]["message"]
    assert "id" not in message["tool_calls"][0]


@effect("finish-reason-missing")
def _(client: httpx.Client) -> None:
    response = post(client, TOOL_REQUEST, "finish-reason-missing")
    assert set(finish_reasons(response)) == {None} and deltas(response)[-1] == {}
    body = post(client, {**TOOL_REQUEST, "stream": False}, "finish-reason-missing").json()
    assert body["choices"][0]["finish_reason"] is None


@effect("role-missing")
def _(client: httpx.Client) -> None:
    assert deltas(post(client, TEXT_REQUEST, "role-missing"))[0] == {"content": ""}


@effect("chunk-id-changes")
def _(client: httpx.Client) -> None:
    ids = [chunk["id"] for chunk in chunks(post(client, TEXT_REQUEST, "chunk-id-changes"))]
    assert len(set(ids)) == len(ids) > 1


@effect("object-not-chunk")
def _(client: httpx.Client) -> None:
    assert {chunk["object"] for chunk in chunks(post(client, TEXT_REQUEST, "object-not-chunk"))} == {"chat.completion"}


@effect("usage-chunk-unrequested")
def _(client: httpx.Client) -> None:
    last = chunks(post(client, TEXT_REQUEST, "usage-chunk-unrequested"))[-1]
    assert last["choices"] == [] and last["usage"]["completion_tokens"] == 5


@effect("usage-ignored")
def _(client: httpx.Client) -> None:
    response = post(client, {**TEXT_REQUEST, "stream_options": {"include_usage": True}}, "usage-ignored")
    assert all(chunk["choices"] and "usage" not in chunk for chunk in chunks(response))


@effect("tool-choice-ignored")
def _(client: httpx.Client) -> None:
    forced = {**TOOL_REQUEST, "stream": False, "tool_choice": {"type": "function", "function": {"name": "x"}}}
    assert post(client, forced, "tool-choice-ignored").json()["choices"][0]["finish_reason"] == "tool_calls"
    refused = {**forced, "tool_choice": "none"}
    assert post(client, refused, "tool-choice-ignored").json()["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


# `lmconform serve`, the reference server in the foreground, as a user starts it.
SERVE = [sys.executable, "-m", "lmconform.cli", "serve"]


@pytest.mark.parametrize(("options", "complaint"), [
    (["--port", "99999"], "argument --port: takes a whole number from 0 to 65535, not '99999'"),
    (["--port", "0", "--store-size", "0"], "argument --store-size: takes a whole number of at least 1, not '0'"),
    (["--port", "0", "--stream-pause", "-1"], "argument --stream-pause: takes a number from 0 to 60, not '-1'"),
])
def test_a_bad_serve_option_is_one_line_and_exit_status_2(options, complaint):
    done = processes.run([*SERVE, *options], timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"lmconform serve: {complaint}; `lmconform serve --help` says what it takes\n"


def test_serve_on_an_address_in_use_is_one_line_and_exit_status_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = processes.run([*SERVE, "--port", str(port)], timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == f"lmconform serve: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_serve_on_any_free_port_says_which_answers_there_and_stops_on_an_interrupt():
    server = subprocess.Popen([*SERVE, "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        said = server.stderr.readline()  # the first line, before uvicorn's own
        address = re.search(r"lmconform reference server on (http://127\.0\.0\.1:\d+) ", said)
        assert address, said
        models = httpx.get(f"{address.group(1)}/v1/models", timeout=60).json()
        assert models["data"][0]["id"] == "lmconform-reference"
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
    finally:
        server.kill()
        server.wait()
        server.stderr.close()


@pytest.mark.parametrize(("text", "kind", "low", "high"), [("x", int, 0, 9), ("10", int, 0, 9), ("-1", int, 0, 9),
                                                          ("nan", float, 0, 9), ("inf", float, 0, 9),
                                                          ("1.5", int, 0, 9), ("0", int, 1, sys.maxsize)])
def test_a_bounded_option_refuses_what_is_not_a_number_within_its_bounds(text, kind, low, high):
    with pytest.raises(argparse.ArgumentTypeError):
        bounded(kind, low, high)(text)


def test_a_bounded_option_gives_the_number():
    assert bounded(int, 0, 65535)("65535") == 65535 and bounded(float, 0, 60)("0.003") == 0.003
    assert bounded(float, 0, 60)("0") == 0 and SECONDS("0.001") == 0.001 and SECONDS("86400") == 86400


@pytest.mark.parametrize("text", ["0", "-0.5", "86401", "inf"])
def test_a_wait_is_above_0_and_at_most_a_day(text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"takes a number above 0 and at most 86400, not '{text}'"):
        SECONDS(text)
