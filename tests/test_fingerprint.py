"""Fingerprints of the embedded reference server and of small fake servers that answer as LM Studio, llama.cpp
and LiteLLM do, each on a real socket since the probes use a real HTTP client."""

from __future__ import annotations

import argparse
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from lmconform.fingerprint import fingerprint, register
from lmconform.reference import ReferenceServer
from lmconform.target import Target

METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"]


class FakeServer(ReferenceServer):
    """A test's own app, served as the reference server is: uvicorn on a loopback port in a thread."""

    def __init__(self, app: Starlette) -> None:
        super().__init__()
        app.state.stopping = threading.Event()  # what the reference server's shutdown sets
        self.app = app


@contextmanager
def serve(answers: dict[tuple[str, str], Response], otherwise: Response,
          headers: dict[str, str] | None = None) -> Iterator[tuple[str, list[tuple[str, str, bytes]]]]:
    """A server that answers `(method, path)` from `answers` and anything else with `otherwise`; yields its base
    URL and the requests it received."""
    received: list[tuple[str, str, bytes]] = []

    async def respond(request: Request) -> Response:
        received.append((request.method, request.url.path, await request.body()))
        answer = answers.get((request.method, request.url.path), otherwise)
        return Response(answer.body, answer.status_code, {**answer.headers, **(headers or {})})

    with FakeServer(Starlette(routes=[Route("/{path:path}", respond, methods=METHODS)])) as server:
        yield server.base_url, received


def lmstudio_unknown_route() -> Response:
    # LM Studio answers a route it does not serve with 200; the method and path in the text do not matter here.
    return JSONResponse({"error": "Unexpected endpoint or method. (GET /v1/lmconform-fingerprint-probe)"})


LMSTUDIO_MODELS = JSONResponse({"data": [{"id": "qwen/qwen3-4b", "object": "model", "owned_by": "organization_owner"}],
                                "object": "list"})
LMSTUDIO_NATIVE_MODELS = JSONResponse({"object": "list", "data": [
    {"id": "qwen/qwen3-4b", "object": "model", "type": "llm", "publisher": "qwen", "arch": "qwen3",
     "compatibility_type": "gguf", "quantization": "Q4_K_M", "state": "loaded", "max_context_length": 32768,
     "runtime": {"name": "llama.cpp-linux-x86_64-avx2", "version": "1.52.0"}}]})
RESPONSES_VALIDATION_ERROR = JSONResponse({"error": "Invalid request body: 'input' is required"}, status_code=400)


@pytest.mark.parametrize(("routes", "bracket"), [
    ({("GET", "/api/v0/models")}, ">=0.3.6,<0.3.29"),
    ({("GET", "/api/v0/models"), ("POST", "/v1/responses")}, ">=0.3.29,<0.4.0"),
    ({("GET", "/api/v0/models"), ("POST", "/v1/responses"), ("GET", "/api/v1/models")}, ">=0.4.0"),
])
def test_lmstudio_is_bracketed_by_the_endpoints_that_answer(routes, bracket):
    every_route = {("GET", "/v1/models"): LMSTUDIO_MODELS, ("GET", "/api/v0/models"): LMSTUDIO_NATIVE_MODELS,
                   ("POST", "/v1/responses"): RESPONSES_VALIDATION_ERROR,
                   ("GET", "/api/v1/models"): JSONResponse({"models": []})}
    answers = {key: every_route[key] for key in routes | {("GET", "/v1/models")}}
    with serve(answers, lmstudio_unknown_route(), {"X-Powered-By": "Express"}) as (url, received):
        result = fingerprint(Target(url))
    assert result["kind"] == "lmstudio" and result["version_bracket"] == bracket
    assert result["engine"] == "llama.cpp-linux-x86_64-avx2 1.52.0"
    assert "X-Powered-By: Express (LM Studio's HTTP server)" in result["evidence"]
    assert any("LM Studio's unknown-route answer" in line for line in result["evidence"])
    assert ("POST", "/v1/chat/completions") not in {(method, path) for method, path, _ in received}, \
        "a chat probe would make LM Studio load a model"
    assert [body for method, path, body in received if path == "/v1/responses"] == [b"{}"]


def test_express_and_the_native_api_say_lmstudio_without_the_unknown_route_tell():
    answers = {("GET", "/v1/models"): LMSTUDIO_MODELS, ("GET", "/api/v0/models"): LMSTUDIO_NATIVE_MODELS}
    with serve(answers, JSONResponse({"error": "not found"}, status_code=404), {"X-Powered-By": "Express"}) as (url, _):
        result = fingerprint(Target(url))
    assert result["kind"] == "lmstudio" and result["version_bracket"] == ">=0.3.6,<0.3.29"


LLAMA_CPP_NOT_FOUND = JSONResponse({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}},
                                   status_code=404)
LLAMA_CPP_MODELS = JSONResponse({"object": "list", "data": [{"id": "gemma-3-270m", "object": "model",
                                                             "owned_by": "llamacpp"}]})


def test_llama_cpp_tells_its_build_in_system_fingerprint():
    completion = JSONResponse({"id": "chatcmpl-Ab3", "object": "chat.completion", "created": 1795324708,
                               "model": "gemma-3-270m", "system_fingerprint": "b11669-0f1a2b3c",
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"},
                                            "finish_reason": "length"}]})
    answers = {("GET", "/v1/models"): LLAMA_CPP_MODELS, ("GET", "/health"): JSONResponse({"status": "ok"}),
               ("POST", "/v1/chat/completions"): completion}
    with serve(answers, LLAMA_CPP_NOT_FOUND) as (url, received):
        result = fingerprint(Target(url))
    assert result["kind"] == "llama.cpp" and result["version_bracket"] == "==b11669"
    assert result["engine"] == "llama.cpp b11669"
    assert "chat completion: system_fingerprint b11669-0f1a2b3c" in result["evidence"]
    [chat] = [json.loads(body) for method, path, body in received if path == "/v1/chat/completions"]
    assert chat["max_tokens"] == 1 and chat["model"] == "gemma-3-270m"


def test_llama_cpp_props_give_the_build_without_generating():
    props = JSONResponse({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1,
                          "build_info": "b11669-0f1a2b3c"})
    answers = {("GET", "/v1/models"): LLAMA_CPP_MODELS, ("GET", "/props"): props}
    with serve(answers, LLAMA_CPP_NOT_FOUND) as (url, received):
        result = fingerprint(Target(url))
    assert result["kind"] == "llama.cpp" and result["version_bracket"] == "==b11669"
    assert "/v1/chat/completions" not in {path for _, path, _ in received}


def test_litellm_tells_its_version_in_its_openapi_document():
    answers = {
        ("GET", "/openapi.json"): JSONResponse({"openapi": "3.1.0", "info": {"title": "LiteLLM API",
                                                                            "version": "1.77.7"}, "paths": {}}),
        ("GET", "/health/liveliness"): JSONResponse("I'm alive!"),
        ("GET", "/v1/models"): JSONResponse({"error": {"message": "Authentication Error, No api key passed in.",
                                                       "type": "auth_error", "param": "None", "code": "401"}},
                                            status_code=401),
    }
    with serve(answers, JSONResponse({"detail": "Not Found"}, status_code=404)) as (url, _):
        result = fingerprint(Target(url))
    assert result == {"kind": "litellm", "version_bracket": "==1.77.7", "engine": None,
                      "evidence": ["GET /openapi.json: LiteLLM API 1.77.7"]}


def test_the_reference_server_is_known_by_its_model():
    with ReferenceServer() as server:
        result = fingerprint(Target(server.base_url))
    assert result["kind"] == "reference" and result["evidence"] == ["GET /v1/models lists lmconform-reference"]


def test_a_server_no_rule_knows_is_unknown_with_what_was_seen():
    with serve({}, PlainTextResponse("Not Found", status_code=404), {"X-Powered-By": "PHP/8.3"}) as (url, _):
        result = fingerprint(Target(url))
    assert result == {"kind": "unknown", "version_bracket": None, "engine": None,
                      "evidence": ["GET /v1/models: 404", "server: uvicorn", "x-powered-by: PHP/8.3"]}


def command(*args: str) -> int:
    parser = argparse.ArgumentParser(prog="lmconform")
    register(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(["fingerprint", *args])
    return parsed.handler(parsed)


def test_the_command_prints_the_fingerprint_as_json(capsys):
    with ReferenceServer() as server:
        assert command(server.base_url + "/v1") == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "reference"


def test_the_command_exits_3_with_one_line_when_nothing_answers(capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert command(f"http://127.0.0.1:{port}") == 3
    streams = capsys.readouterr()
    assert streams.out == "" and streams.err == f"lmconform fingerprint: nothing answers at http://127.0.0.1:{port}\n"


@pytest.mark.parametrize("seconds", ["-1", "0", "nan", "inf", "1e12"])
def test_a_wait_a_socket_cannot_take_is_a_usage_error(capsys, seconds):
    """A negative or infinite --read-timeout reached the socket as a traceback; 0 read as a server that says nothing."""
    with pytest.raises(SystemExit) as exited:
        command("http://127.0.0.1:9", "--read-timeout", seconds)
    assert exited.value.code == 2
    assert f"argument --read-timeout: takes a number above 0 and at most 86400, not '{seconds}'" in capsys.readouterr().err


def test_an_answer_that_is_not_http_is_unknown_with_what_went_wrong():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def answer_garbage() -> None:  # to every probe, until the listener closes
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                with connection:
                    connection.recv(65536)
                    connection.sendall(b"\x00\x01 not http\r\n\r\n")

        threading.Thread(target=answer_garbage, daemon=True).start()
        result = fingerprint(Target(f"http://127.0.0.1:{listener.getsockname()[1]}"))
    assert result["kind"] == "unknown"
    assert result["evidence"][0].startswith("GET /v1/models: ") and "illegal status line" in result["evidence"][0]


def test_a_server_that_says_nothing_is_asked_once():
    """Each probe would wait the read timeout again: against a silent server the command took a minute."""
    held: list[socket.socket] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)

        def hold_every_connection() -> None:  # accepted, read from never, answered never
            while True:
                try:
                    held.append(listener.accept()[0])
                except OSError:
                    return

        threading.Thread(target=hold_every_connection, daemon=True).start()
        result = fingerprint(Target(f"http://127.0.0.1:{listener.getsockname()[1]}", read_timeout=0.5))
    for connection in held:
        connection.close()
    assert result == {"kind": "unknown", "version_bracket": None, "engine": None,
                      "evidence": ["GET /v1/models: no bytes for 0.5 s (read timeout) after nothing"]}
    assert len(held) == 1
