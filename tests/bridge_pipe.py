"""Driving `lmconform bridge` as a real subprocess over real pipes, with every wait bounded and every process
reaped (the `bridges_reaped` fixture asserts it after each test)."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import processes
import pytest

import lmconform

# The package under test, for the subprocess too: the same checkout the tests import, not an installed copy.
PACKAGE_ROOT = Path(lmconform.__file__).resolve().parents[1]
# Limits of waits for events, generous enough for a loaded CI runner (two busy cores): reached only when the bridge
# has failed the test, so their length costs nothing when it works.
READ_TIMEOUT = 60.0  # a bridge that says nothing for this long has failed the test; it covers the slow path of a
# first answer too: starting Python, loading lmconform's command line, and (without --endpoint) starting the
# embedded reference server before the first request can be answered
EXIT_TIMEOUT = 60.0  # after stdin ends: the bridge's own grace for turns still answering (5 s), then its exit
ECHO = ("--agent", "echo")
AGENT = {"eliza": {"deterministic": True}}  # Symposium's deterministic test agent; the bridge checks its shape only

WEATHER = {"name": "get_weather", "description": "The weather in a city",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
SLOW_ECHO = (*ECHO, "--part-delay", "0.1")  # a part every 0.1 s: time to cancel mid-stream
# A question whose echo takes about a minute at that pace: the test's cancel lands mid-stream however long a busy
# machine keeps the test from sending it, and a cancelled answer stops at once, so the length costs nothing.
SLOW_QUESTION = "Hello, " + "a long question, " * 200
SLOW_ANSWER = f"session 1 turn 1: 0 committed messages, new session; new input: user: {SLOW_QUESTION}"

_started: list[BridgeProcess] = []


def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "value": value}


def user(*parts: dict[str, Any] | str) -> dict[str, Any]:
    return {"role": "user", "content": [text(part) if isinstance(part, str) else part for part in parts]}


def assistant(*parts: dict[str, Any] | str) -> dict[str, Any]:
    return {"role": "assistant", "content": [text(part) if isinstance(part, str) else part for part in parts]}


def chat_params(messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"modelId": "lmconform-bridge", "agent": AGENT, "messages": messages}
    if options:
        params["options"] = options
    return params


def parts_of(messages: list[dict[str, Any]], request_id: Any) -> list[dict[str, Any]]:
    return [m["params"]["part"] for m in messages
            if m.get("method") == "lm/responsePart" and m["params"]["requestId"] == request_id]


def answer_text(messages: list[dict[str, Any]], request_id: Any) -> str:
    return "".join(part["value"] for part in parts_of(messages, request_id) if part["type"] == "text")


def kinds(messages: list[dict[str, Any]]) -> list[str]:
    """Each message as one word: part, complete, result or error."""
    names = {"lm/responsePart": "part", "lm/responseComplete": "complete"}
    return [names.get(m.get("method"), "result" if "result" in m else "error" if "error" in m else "?")
            for m in messages]


def same_json(a: Any, b: Any) -> bool:
    """Equal with the same JSON types: 7 is not "7", and True is not 1."""
    return json.dumps(a) == json.dumps(b)


# `lmconform bridge` as users run it, and the same bridge without the rest of the command line, which starts
# faster (0.15 s against 0.9 s here with the echo agent); the tests use the second but for those of the command.
# Both are run as `python -m` in the checkout, which puts it first on sys.path: the package under test, not an installed
# copy. In make check their Python is forked (tests/processes.py).
LMCONFORM_BRIDGE = (*processes.PYTHON, "-m", "lmconform.cli", "bridge")
FAST_BRIDGE = (*processes.PYTHON, "-m", "lmconform.bridge")


class BridgeProcess:
    def __init__(self, *options: str, command: tuple[str, ...] = FAST_BRIDGE) -> None:
        self.process = subprocess.Popen(
            [*command, *options], cwd=PACKAGE_ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _started.append(self)
        self._stdout: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        self._pumps = [threading.Thread(target=self._pump, args=(self.process.stdout, self._stdout.put), daemon=True),
                       threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr.append), daemon=True)]
        for pump in self._pumps:
            pump.start()
        self._next_id = 0

    @staticmethod
    def _pump(stream: Any, put: Any) -> None:
        for line in iter(stream.readline, b""):
            put(line.decode("utf-8", "replace").rstrip("\n"))
        put(None)

    def send_line(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message))

    def request(self, method: str, params: Any = None, request_id: Any = None) -> Any:
        """Send a request; its id (numbered 1, 2, … unless given)."""
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def chat(self, messages: list[dict[str, Any]], request_id: Any = None, **options: Any) -> Any:
        return self.request("lm/provideLanguageModelChatResponse", chat_params(messages, **options), request_id)

    def cancel(self, request_id: Any) -> None:
        self.notify("lm/cancel", {"requestId": request_id})

    def next_line(self, timeout: float = READ_TIMEOUT) -> str | None:
        """The next stdout line, or None when stdout has ended."""
        try:
            return self._stdout.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the bridge said nothing for {timeout} s; stderr: {self.stderr}") from None

    def next_message(self, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        line = self.next_line(timeout)
        assert line is not None, f"stdout ended; stderr: {self.stderr}"
        return json.loads(line)

    def until_answer(self, request_id: Any, timeout: float = READ_TIMEOUT) -> list[dict[str, Any]]:
        """Every message up to and including the result or error with this id (same JSON type)."""
        seen = []
        while True:
            message = self.next_message(timeout)
            seen.append(message)
            if "method" not in message and same_json(message.get("id"), request_id):
                return seen

    def turn(self, messages: list[dict[str, Any]], request_id: Any = None, **options: Any) -> list[dict[str, Any]]:
        return self.until_answer(self.chat(messages, request_id, **options))

    def silent_for(self, seconds: float) -> None:
        line = None
        try:
            line = self._stdout.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"expected nothing, got {line!r}")

    def close(self, expect_status: int = 0) -> None:
        """End stdin; the bridge must exit with this status at once."""
        self.process.stdin.close()
        try:
            status = self.process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"the bridge did not exit within {EXIT_TIMEOUT} s of stdin ending") from None
        assert status == expect_status, f"exit status {status}; stderr: {self.stderr}"

    def reap(self) -> None:
        """Kill the process if it still runs, wait for it, and close the pipes once their readers are done."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pump in self._pumps:
            pump.join(timeout=EXIT_TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if not stream.closed:
                stream.close()


def _still_children(pids: list[int]) -> list[int]:
    """Those of these processes that are still children of this one, running or zombie (a zombie keeps its
    /proc entry until it is waited for)."""
    left = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        if f"PPid:\t{os.getpid()}" in status:
            left.append(pid)
    return left


@pytest.fixture
def bridges_reaped() -> Iterator[None]:
    """After each test: every bridge it started has exited and been waited for, and none is left behind."""
    yield
    running = [bridge.process.pid for bridge in _started if bridge.process.returncode is None]
    pids = [bridge.process.pid for bridge in _started]
    for bridge in _started:
        bridge.reap()
    _started.clear()
    assert not running, f"bridge(s) {running} were still running after the test"
    assert not _still_children(pids), _still_children(pids)
