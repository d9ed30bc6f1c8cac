"""The stdio transport: a target that is a command line (a VS Code language-model bridge), spoken to in
newline-delimited JSON-RPC 2.0 over the process's stdin and stdout.

A transport starts one process for a case, on its first message, and every message of the case goes to it; closing
the transport ends the process. Each message written is an exchange, which keeps the process's whole transcript
(lines both ways with their times, stderr, the exit status), so that a check can read the order of everything. A
request waits for its answer (a JSON-RPC response with its id), with each message about it (a part, a complete)
counting as progress: a process that never answers, dies or floods ends the exchange with an error inside the read
timeout, never a hang.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lmconform.target import DEFAULT_READ_TIMEOUT_S, Target
from lmconform.wire.exchange import BodyChunk, Exchange, Request
from lmconform.wire.jsonlines import Message
from lmconform.wire.process import StdioProcess, correlation

JSONRPC = "2.0"
# How long a process whose stdin has ended is given to exit by itself before it is stopped.
EXIT_GRACE_S = 3.0


class _NoId:
    def __repr__(self) -> str:
        return "NO_ID"


NO_ID: Any = _NoId()  # a notification, or a raw line: nothing answers it


@dataclass(frozen=True)
class StdioRequest(Request):
    """One line written to the process: a request (with its id), a notification, or raw text."""

    method: str | None  # None for a raw line
    body: Any  # the params sent (None: none), or the raw text of a raw line
    request_id: Any  # NO_ID for a notification or a raw line
    line: bytes
    process: StdioProcess = field(repr=False, compare=False)

    @property
    def is_request(self) -> bool:
        return self.request_id is not NO_ID

    @property
    def raw(self) -> bool:
        return self.method is None

    def reproduction(self) -> str:
        """Every line the case wrote, replayed into the command: a defect may need the lines before and after."""
        return self.process.replay_command()


def request_line(method: str, params: Any, request_id: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": JSONRPC}
    if request_id is not NO_ID:
        message["id"] = request_id
    message["method"] = method
    if params is not None:
        message["params"] = params
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass
class StdioExchange(Exchange):
    """One message written and what the process said about it. `chunks` are the stdout lines about its request
    (its parts, its complete, its response), kept once the case is over; `process` has everything else."""

    request: StdioRequest  # the line written: the base's field, narrowed
    process: StdioProcess | None = field(default=None, repr=False, compare=False)
    sent_at: float = 0.0  # on the process's clock
    holds_conversation = True

    @property
    def request_id(self) -> Any:
        return self.request.request_id

    @property
    def messages(self) -> list[Message]:
        """Every stdout message about this request, in the order they came."""
        if self.process is None or not self.request.is_request:
            return []
        return self.process.messages_about(self.request_id)

    @property
    def response(self) -> Message | None:
        """The first JSON-RPC response to this request (a result or an error)."""
        return next((m for m in self.messages if "method" not in m.value), None)

    @property
    def answered(self) -> bool:
        return self.response is not None

    @property
    def succeeded(self) -> bool:
        response = self.response
        return response is not None and "result" in response.value and "error" not in response.value

    @property
    def status_text(self) -> str:
        response = self.response
        if response is None:
            return "no answer" + (f" ({self.error})" if self.error else "")
        error = response.value.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            return f"error {code}: {text}" if code is not None else f"error {json.dumps(error)[:200]}"
        return "a result"

    def parts_count(self) -> int:
        return sum(1 for m in self.messages if m.value.get("method") == "lm/responsePart")

    def last_progress(self) -> float:
        messages = self.messages
        return messages[-1].at if messages else self.sent_at

    def keep_lines(self) -> None:
        """The lines about this request as its body, each at its time since the request was written."""
        self.chunks = [BodyChunk(line.at - self.sent_at, line.data + b"\n")
                       for message in self.messages for line in message.lines]
        self.__dict__.pop("body", None)


class StdioTransport:
    """One process for one case: started by the first message, ended by `close`."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.process: StdioProcess | None = None
        self.exchanges: list[StdioExchange] = []
        self._next_id = 0

    def _running(self) -> StdioProcess:
        if self.process is None:
            self.process = StdioProcess(self.target.bridge_command, self.target.max_body_bytes, self.target.secrets)
        return self.process

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def write(self, method: str | None, params: Any = None, request_id: Any = NO_ID,
              raw: str | None = None) -> StdioExchange:
        """Write one line: a request when `request_id` is given, else a notification; `raw` text instead of a
        message. Returns at once; `await_answer` waits for a request's answer."""
        process = self._running()
        if raw is not None:
            line = raw.encode("utf-8")
        elif method is not None:
            line = request_line(method, params, request_id)
        else:
            raise ValueError("a line written is a message, with its method, or raw text")
        request = StdioRequest(None if raw is not None else method, raw if raw is not None else params,
                               request_id if raw is None else NO_ID, line, process)
        exchange = StdioExchange(request=request, max_body_bytes=self.target.max_body_bytes, process=process,
                                 sent_at=process.clock())
        self.exchanges.append(exchange)
        if process.start_error:
            exchange.error_kind, exchange.error = "unreachable", process.start_error
        elif not process.write(line, request.request_id, request.is_request):
            exchange.error_kind = "exited"
            exchange.error = f"the bridge could not be written to: it has exited ({self._exit_text()})"
        return exchange

    def await_answer(self, exchange: StdioExchange, at_most: float | None = None) -> None:
        """Wait for the request's response; with `at_most`, only that long, and not answering is no error (a
        cancelled request need not be answered)."""
        timeout = self.target.read_timeout if at_most is None else min(at_most, self.target.read_timeout)
        self._await(exchange, lambda: exchange.answered, timeout, soft=at_most is not None)

    def await_parts(self, exchange: StdioExchange, count: int) -> None:
        """Wait until the request has streamed `count` parts (or has been answered)."""
        self._await(exchange, lambda: exchange.answered or exchange.parts_count() >= count, self.target.read_timeout)

    def _await(self, exchange: StdioExchange, done, read_timeout: float, soft: bool = False) -> None:
        if exchange.error or self.process is None or not exchange.request.is_request:
            return
        if soft:
            started = self.process.clock()
            self.process.wait(done, lambda: started, read_timeout, started + read_timeout)
            return
        deadline = exchange.sent_at + self.target.answer_deadline
        why = self.process.wait(done, exchange.last_progress, read_timeout, deadline)
        if why is None:
            return
        exchange.error_kind = why
        exchange.error = self._why_text(why, exchange, read_timeout)
        if why == "flood":
            exchange.truncated = True

    def _why_text(self, why: str, exchange: StdioExchange, read_timeout: float) -> str:
        request = f"request {json.dumps(exchange.request_id)} ({exchange.request.method})"
        if why == "flood":
            return (f"the bridge wrote more than {self.target.max_body_bytes} bytes on stdout (--max-body-bytes) "
                    f"without answering {request}; reading stopped and the bridge was stopped")
        if why == "exited":
            stderr = self.process.stderr_text(last=3) if self.process else ""
            return (f"the bridge ended its stdout before answering {request}"
                    + (f"; the end of its stderr: {stderr}" if stderr else ""))
        if why == "deadline":
            return f"{request} was still being answered after {self.target.answer_deadline:g} s"
        return f"no answer to {request}, and nothing about it, for {read_timeout:g} s (read timeout)"

    def _exit_text(self) -> str:
        stderr = self.process.stderr_text(last=3) if self.process else ""
        return "its stdin is closed" + (f"; the end of its stderr: {stderr}" if stderr else "")

    def send(self, method: str, path: str | None, body: Any = None, raw_body: str | None = None,
             headers: Mapping[str, str] | None = None) -> StdioExchange:
        """The transport protocol's send: a request with the next id, or a raw line, answered before it returns. A
        message has no headers (the case reader refuses a stdio case that names some)."""
        if raw_body is not None:
            return self.write(None, raw=raw_body)
        exchange = self.write(method, body, self.next_id())
        self.await_answer(exchange)
        return exchange

    def close(self) -> None:
        """End the process (stdin first, then its group if it lingers), and keep each exchange's lines."""
        if self.process is None:
            return
        self.process.close(min(EXIT_GRACE_S, self.target.read_timeout or DEFAULT_READ_TIMEOUT_S))
        for exchange in self.exchanges:
            exchange.keep_lines()
            exchange.duration_s = max(0.0, (exchange.messages[-1].at if exchange.messages else exchange.sent_at)
                                      - exchange.sent_at)


def answer_value(message: Message | None) -> Any:
    """What a response carries: its `result`, or None."""
    return message.value.get("result") if message is not None and isinstance(message.value, dict) else None


__all__ = ["NO_ID", "StdioExchange", "StdioRequest", "StdioTransport", "correlation", "request_line"]
