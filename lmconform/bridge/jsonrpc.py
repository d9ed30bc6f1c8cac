"""JSON-RPC 2.0 framed as newline-delimited JSON: reading one incoming line, writing one outgoing message per line.

The bridge writes nothing to stdout but these messages: a client reads stdout line by line and parses every line,
so one stray byte breaks it. The framing faults (`missing-jsonrpc-version`, `message-split-across-lines`,
`non-json-stdout-line`, `result-id-as-string`) are applied in `Output` and nowhere else.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, BinaryIO

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AGENT_FAILURE = -32000  # what Symposium's bridge answers when its agent fails

RESPONSE_PART = "lm/responsePart"
RESPONSE_COMPLETE = "lm/responseComplete"

log = logging.getLogger("lmconform.bridge")


class ParseError(ValueError):
    """The line is not JSON."""


class InvalidRequest(ValueError):
    """JSON, but not a JSON-RPC 2.0 request or notification. `request_id` is the id to answer with, when the
    message carried a usable one."""

    def __init__(self, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@dataclass(frozen=True)
class Incoming:
    method: str
    params: Any  # None when absent; each method's own validation decides whether that is acceptable
    request_id: Any  # the id exactly as sent (a number stays a number); meaningful only when is_request
    is_request: bool


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool))


def parse_line(line: bytes) -> Incoming | None:
    """The message a line carries, or None for one to ignore (a response: this bridge sends no requests, so no
    response is awaited, and answering one with an error could start two peers trading errors)."""
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ParseError(str(error)) from None
    if not isinstance(message, dict):
        raise InvalidRequest("a message must be a JSON object (batches are not supported)")
    has_id = "id" in message
    request_id = message.get("id") if has_id and _is_id(message.get("id")) else None
    if has_id and not _is_id(message["id"]):
        raise InvalidRequest("`id` must be a string, a number or null")
    if "method" not in message and ("result" in message or "error" in message):
        log.warning("ignored a response with id %r: this bridge sends no requests", request_id)
        return None
    if message.get("jsonrpc") != "2.0":
        raise InvalidRequest('`jsonrpc` must be "2.0"', request_id)
    if not isinstance(message.get("method"), str):
        raise InvalidRequest("`method` must be a string", request_id)
    return Incoming(message["method"], message.get("params"), request_id, has_id)


class Output:
    """The bridge's stdout. One thread writes (the event loop's), so messages never interleave."""

    def __init__(self, stream: BinaryIO, faults: frozenset[str]) -> None:
        self._stream = stream
        self._faults = faults
        self.closed = False

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        if "result-id-as-string" in self._faults and isinstance(request_id, int | float):
            request_id = json.dumps(request_id)
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self._send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def started(self) -> None:
        """Called once before the first message is read."""
        if "non-json-stdout-line" in self._faults:
            self._write(b"lmconform bridge ready\n")

    def _send(self, message: dict[str, Any]) -> None:
        if "missing-jsonrpc-version" in self._faults:
            del message["jsonrpc"]
        if "message-split-across-lines" in self._faults and message.get("method") == RESPONSE_PART:
            text = json.dumps(message, ensure_ascii=False, indent=2)
        else:
            # json.dumps escapes every newline inside strings, so this is exactly one line.
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self._write(text.encode("utf-8") + b"\n")

    def _write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self._stream.write(data)
            self._stream.flush()  # the client waits for each message as it comes; nothing may sit in a buffer
        except (BrokenPipeError, ValueError):
            # The client closed its end: nothing more can be said, and the bridge ends when stdin does.
            self.closed = True
            log.warning("stdout is closed; dropping further messages")
