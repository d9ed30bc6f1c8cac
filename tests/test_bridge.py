"""`lmconform bridge`, the reference VS Code language-model bridge, driven as a subprocess over real pipes: the
protocol as docs/bridge.md states it, message by message. Its faults: test_bridge_faults.py."""

from __future__ import annotations

import http.server
import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from bridge_pipe import (
    ECHO,
    LMCONFORM_BRIDGE,
    PACKAGE_ROOT,
    READ_TIMEOUT,
    SLOW_ANSWER,
    SLOW_ECHO,
    SLOW_QUESTION,
    WEATHER,
    BridgeProcess,
    answer_text,
    assistant,
    bridges_reaped,  # noqa: F401  (a fixture, used by name below)
    chat_params,
    closed_port,
    kinds,
    parts_of,
    same_json,
    user,
)
from handlers import serving

from lmconform.bridge.dispatcher import EOF_GRACE_SECONDS
from lmconform.reference import ReferenceServer

pytestmark = [pytest.mark.usefixtures("bridges_reaped"), pytest.mark.waits]


def through(server: ReferenceServer, *options: str, path: str = "") -> BridgeProcess:
    return BridgeProcess("--endpoint", server.base_url + path, *options)


def assert_one_turn(messages: list[dict[str, Any]], request_id: Any) -> None:
    """Parts, one complete, the result `{}`, in that order, all about this request, its id with its JSON type."""
    assert kinds(messages) == ["part"] * (len(messages) - 2) + ["complete", "result"]
    for message in messages[:-1]:
        assert same_json(message["params"]["requestId"], request_id), message
        assert message["jsonrpc"] == "2.0"
    assert messages[-1] == {"jsonrpc": "2.0", "id": request_id, "result": {}}


@pytest.mark.parametrize("request_id", [7, "turn-7"])
def test_plain_turn_streams_parts_then_one_complete_then_the_result(server: ReferenceServer, request_id: Any) -> None:
    bridge = through(server)
    messages = bridge.turn([user("Hello there")], request_id=request_id)
    assert_one_turn(messages, request_id)
    assert len(parts_of(messages, request_id)) > 1, "text is streamed as it arrives, not in one part"
    assert answer_text(messages, request_id) == "You said: Hello there"
    bridge.close()


def test_default_endpoint_is_the_embedded_reference_server_and_its_first_model() -> None:
    bridge = BridgeProcess(command=LMCONFORM_BRIDGE)  # also: the command as registered in `lmconform`
    assert answer_text(bridge.turn([user("Hi")]), 1) == "You said: Hi"
    bridge.close()


@pytest.mark.parametrize("tool_mode, prompt", [("required", "Hello"), ("auto", "What is the weather in Paris?")])
def test_a_tool_call_is_one_part_sent_last(server: ReferenceServer, tool_mode: str, prompt: str) -> None:
    bridge = through(server)
    messages = bridge.turn([user(prompt)], tools=[WEATHER], toolMode=tool_mode)
    assert_one_turn(messages, 1)
    call = parts_of(messages, 1)[-1]
    assert call["type"] == "tool_call" and call["toolName"] == "get_weather"
    assert isinstance(call["toolCallId"], str) and call["toolCallId"]
    assert isinstance(call["parameters"], dict) and set(call["parameters"]) == {"city"}
    assert [part["type"] for part in parts_of(messages, 1)].count("tool_call") == 1
    bridge.close()


def test_a_tool_result_continues_the_conversation(server: ReferenceServer) -> None:
    bridge = through(server)
    asked = user("What is the weather in Paris?")
    call = parts_of(bridge.turn([asked], tools=[WEATHER], toolMode="required"), 1)[-1]
    result = {"type": "tool_result", "toolCallId": call["toolCallId"], "result": "sunny"}
    messages = bridge.turn([asked, assistant(call), user(result)], tools=[WEATHER])
    assert_one_turn(messages, 2)
    # The upstream names the tool from the call in the history: the whole conversation was forwarded.
    assert answer_text(messages, 2) == "The get_weather tool returned: sunny"
    bridge.close()


def test_the_echo_agent_shows_commit_discard_and_new_sessions() -> None:
    bridge = BridgeProcess(*ECHO)
    first = [user("Hello")]
    answer = answer_text(bridge.turn(first), 1)
    assert answer == "session 1 turn 1: 0 committed messages, new session; new input: user: Hello"
    # The client sends the answer back split differently: adjacent text parts are merged before comparing.
    kept = [*first, assistant(answer[:10], answer[10:]), user("And ", "now?")]
    assert answer_text(bridge.turn(kept), 2) == ("session 1 turn 2: 2 committed messages, previous turn committed; "
                                                 "new input: user: And now?")
    edited = [*kept[:2], user("Edited")]
    assert answer_text(bridge.turn(edited), 3) == ("session 1 turn 3: 2 committed messages, previous turn "
                                                   "discarded; new input: user: Edited")
    elsewhere = [user("Something else"), assistant("unknown"), user("Go on")]
    assert answer_text(bridge.turn(elsewhere), 4).startswith("session 2 turn 1: 0 committed messages, new session;")
    bridge.close()


def test_the_echo_agent_calls_a_tool_and_a_result_is_its_new_input() -> None:
    bridge = BridgeProcess(*ECHO)
    asked = user("Weather in Paris, get_weather please")
    messages = bridge.turn([asked], tools=[WEATHER])
    assert_one_turn(messages, 1)
    parts = parts_of(messages, 1)
    assert parts[-1] == {"type": "tool_call", "toolCallId": "echo-call-1", "toolName": "get_weather",
                         "parameters": {"city": "Paris"}}
    result = {"type": "tool_result", "toolCallId": "echo-call-1", "result": {"sky": "clear"}}
    answer = answer_text(bridge.turn([asked, assistant(*parts), user(result)], tools=[WEATHER]), 2)
    assert answer == ('session 1 turn 2: 2 committed messages, previous turn committed; new input: user: '
                      '[tool_result echo-call-1 {"sky":"clear"}]')
    bridge.close()


class _OpenRequests:
    """The reference server's app, counting the requests it has not finished answering."""

    def __init__(self, app: Any) -> None:
        self.app, self.state, self.open = app, app.state, 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1


@pytest.fixture
def watched() -> Iterator[tuple[ReferenceServer, _OpenRequests]]:
    server = ReferenceServer()
    server.app = counter = _OpenRequests(server.app)
    with server:
        yield server, counter


def _wait_for(condition: Any, seconds: float = READ_TIMEOUT) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("profile", ["strict", "symposium"])
def test_cancel_stops_a_stalled_upstream_stream(watched: tuple[ReferenceServer, _OpenRequests], profile: str) -> None:
    server, upstream = watched
    bridge = through(server, "--model", "lmconform-reference", "--profile", profile, path="/faults/stall")
    request_id = bridge.chat([user("Hello")])
    assert _wait_for(lambda: upstream.open == 1), "the upstream never got the request"
    bridge.cancel(request_id)
    if profile == "strict":
        assert bridge.until_answer(request_id) == [
            {"jsonrpc": "2.0", "method": "lm/responseComplete", "params": {"requestId": request_id}},
            {"jsonrpc": "2.0", "id": request_id, "result": {}}]
    # Nothing more for the cancelled request: the next message answers the next request.
    info = bridge.request("lm/provideLanguageModelChatInformation", {})
    assert bridge.next_message()["id"] == info
    assert _wait_for(lambda: upstream.open == 0), "the upstream stream was left open"
    bridge.close()


def about(message: dict[str, Any]) -> Any:
    """The request a message is about: its id, or the requestId of a notification."""
    return message["params"]["requestId"] if "method" in message else message.get("id")


def assert_cut_short(messages: list[dict[str, Any]], request_id: Any, profile: str = "strict") -> None:
    """Of the request's messages: parts (however many crossed the cancel), then in the strict profile one complete
    and the result, and the parts are less than the whole answer."""
    own = [message for message in messages if same_json(about(message), request_id)]
    closing = ["complete", "result"] if profile == "strict" else []
    assert kinds(own) == ["part"] * (len(own) - len(closing)) + closing
    said = answer_text(own, request_id)
    assert SLOW_ANSWER.startswith(said) and said != SLOW_ANSWER


def test_stdin_ending_with_a_turn_stalled_ends_the_bridge_after_a_grace(server: ReferenceServer) -> None:
    bridge = through(server, "--model", "lmconform-reference", path="/faults/stall")
    bridge.chat([user("Hello")])
    started = time.monotonic()
    bridge.close()  # within EXIT_TIMEOUT, though the stall lasts 10 minutes
    assert time.monotonic() - started >= EOF_GRACE_SECONDS - 1, "a turn still answering is given its grace"


def test_cancel_mid_stream_stops_the_parts() -> None:
    bridge = BridgeProcess(*SLOW_ECHO)
    request_id = bridge.chat([user(SLOW_QUESTION)])
    first_part = bridge.next_message()
    bridge.cancel(request_id)
    assert_cut_short([first_part, *bridge.until_answer(request_id)], request_id)
    bridge.silent_for(0.5)
    bridge.close()


@pytest.mark.parametrize("profile", ["strict", "symposium"])
def test_a_newer_request_replaces_a_turn_still_streaming(profile: str) -> None:
    bridge = BridgeProcess(*SLOW_ECHO, "--profile", profile)
    first = bridge.chat([user(SLOW_QUESTION)])
    messages = [bridge.next_message()]
    second = bridge.chat([user("Edited")])
    messages += bridge.until_answer(second)
    assert_cut_short(messages, first, profile)
    # The replaced turn is closed before the new one says anything.
    last_of_first = max(i for i, message in enumerate(messages) if same_json(about(message), first))
    assert last_of_first < min(i for i, message in enumerate(messages) if same_json(about(message), second))
    assert answer_text(messages, second) == ("session 1 turn 2: 0 committed messages, previous turn discarded; "
                                             "new input: user: Edited")
    bridge.close()


def test_unknown_method_and_unknown_notification() -> None:
    bridge = BridgeProcess(*ECHO)
    bridge.notify("lm/somethingNew", {"x": 1})  # ignored: a notification is never answered
    request_id = bridge.request("lm/somethingNew", {"x": 1}, request_id="u-1")
    answer = bridge.next_message()
    assert answer["id"] == request_id and answer["error"]["code"] == -32601
    bridge.close()


NOT_JSON = [b"not json", b'{"jsonrpc": "2.0", "id": 1,', b"\xff\xfe", b"NaN", b"{'single': 'quotes'}"]
NO_REQUEST = {"an array": ([1, 2], None), "no jsonrpc": ({"id": 3, "method": "lm/provideTokenCount"}, 3),
              "method not a string": ({"jsonrpc": "2.0", "id": 4, "method": 42}, 4),
              "id an object": ({"jsonrpc": "2.0", "id": {"n": 1}, "method": "lm/provideTokenCount"}, None)}


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_bridge_goes_on() -> None:
    bridge = BridgeProcess(*ECHO)  # one process for all: it must survive every one of them
    for line in NOT_JSON:
        bridge.send_line(line)
        error = bridge.next_message()
        assert error["id"] is None and error["error"]["code"] == -32700, line
    assert answer_text(bridge.turn([user("Still there?")]), 1).endswith("user: Still there?")
    bridge.close()


def test_json_that_is_no_request_gets_invalid_request() -> None:
    bridge = BridgeProcess(*ECHO)
    for name, (message, answered_id) in NO_REQUEST.items():
        bridge.send(message)
        error = bridge.next_message()
        assert error["error"]["code"] == -32600 and same_json(error["id"], answered_id), name
    bridge.close()


BAD_PARAMS = {
    "unknown part type": chat_params([{"role": "user", "content": [{"type": "image", "value": "x"}]}]),
    "malformed agent": {**chat_params([user("Hi")]), "agent": "eliza"},
    "agent with two kinds": {**chat_params([user("Hi")]), "agent": {"eliza": {}, "mcp_server": {}}},
    "no agent": {key: value for key, value in chat_params([user("Hi")]).items() if key != "agent"},
    "messages not a list": {**chat_params([]), "messages": {"role": "user"}},
    "unknown role": chat_params([{"role": "system", "content": [{"type": "text", "value": "x"}]}]),
    "text value not a string": chat_params([{"role": "user", "content": [{"type": "text", "value": 3}]}]),
    "tool call without id": chat_params([assistant({"type": "tool_call", "toolName": "f", "parameters": {}})]),
    "no modelId": {key: value for key, value in chat_params([user("Hi")]).items() if key != "modelId"},
    "bad toolMode": chat_params([user("Hi")], tools=[WEATHER], toolMode="always"),
    "tool without name": chat_params([user("Hi")], tools=[{"description": "x"}]),
    "params an array": [1],
}


def test_params_of_the_wrong_shape_get_invalid_params_and_never_end_the_bridge() -> None:
    bridge = BridgeProcess(*ECHO)
    for name, params in BAD_PARAMS.items():
        answer = bridge.until_answer(bridge.request("lm/provideLanguageModelChatResponse", params))
        assert kinds(answer) == ["error"] and answer[0]["error"]["code"] == -32602, name
    for method, wrong in [("lm/provideTokenCount", {"modelId": "m", "text": 5}),
                          ("lm/provideLanguageModelChatInformation", {"silent": "yes"})]:
        assert bridge.until_answer(bridge.request(method, wrong))[-1]["error"]["code"] == -32602, method
    bridge.notify("lm/cancel", {"id": 1})  # a notification with bad params is logged, never answered
    assert "models" in bridge.until_answer(bridge.request("lm/provideLanguageModelChatInformation"))[-1]["result"]
    bridge.close()


def test_model_information() -> None:
    bridge = BridgeProcess(*ECHO)
    result = bridge.until_answer(bridge.request("lm/provideLanguageModelChatInformation", {"silent": True}))[-1]
    (model,) = result["result"]["models"]
    assert {key: type(value) for key, value in model.items()} == {
        "id": str, "name": str, "family": str, "version": str, "maxInputTokens": int, "maxOutputTokens": int,
        "capabilities": dict}
    assert model["capabilities"] == {"toolCalling": True}
    bridge.close()


def test_token_count_is_at_least_one() -> None:
    bridge = BridgeProcess(*ECHO)
    for text, count in [("", 1), ("abc", 1), ("a" * 40, 10), ("é" * 4, 2)]:  # 4 bytes of UTF-8 a token
        answer = bridge.until_answer(bridge.request("lm/provideTokenCount", {"modelId": "m", "text": text}))[-1]
        assert answer["result"] == {"count": count}, text
    bridge.close()


def test_an_unreachable_upstream_is_error_32000_without_complete() -> None:
    bridge = BridgeProcess("--endpoint", f"http://127.0.0.1:{closed_port()}", "--model", "m")
    messages = bridge.turn([user("Hello")])
    assert kinds(messages) == ["error"]
    assert messages[0]["error"]["code"] == -32000 and "Connection" in messages[0]["error"]["message"]
    bridge.close()


def test_an_upstream_refusal_is_error_32000_with_its_text(server: ReferenceServer) -> None:
    bridge = through(server)
    messages = bridge.turn([])  # the reference server refuses an empty conversation with 400
    assert kinds(messages) == ["error"] and messages[0]["error"]["code"] == -32000
    assert "'messages' must be a non-empty array" in messages[0]["error"]["message"]
    bridge.close()


def test_the_openai_agent_sends_the_sampling_it_was_given() -> None:
    """--max-tokens and --temperature reach every chat completion request (a real model's answers stay short)."""
    bodies: list[dict] = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "seen"}}')

        def log_message(self, *args: object) -> None:
            pass

    with serving(Upstream) as upstream:
        bridge = BridgeProcess("--endpoint", upstream, "--model", "m", "--max-tokens", "7", "--temperature", "0")
        assert kinds(bridge.turn([user("Hello")])) == ["error"]
        bridge.close()
    assert bodies and bodies[0]["max_tokens"] == 7 and bodies[0]["temperature"] == 0


@pytest.mark.parametrize("options", [["--agent", "nope"], ["--fault", "nope"], ["--profile", "lax"],
                                     ["--endpoint", "ftp://example"], ["--bogus"], ["--part-delay", "-1"],
                                     ["--part-delay", "soon"], ["--endpoint"], ["--max-tokens", "0"],
                                     ["--temperature", "3"], ["--part-delay", "inf"]])
def test_a_bad_option_is_one_line_and_exit_status_2(options: list[str]) -> None:
    done = subprocess.run([*LMCONFORM_BRIDGE, *options], cwd=PACKAGE_ROOT,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=READ_TIMEOUT, text=True)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("lmconform bridge: ") and "Traceback" not in done.stderr
