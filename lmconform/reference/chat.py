"""`POST /v1/chat/completions` as LM Studio answers it: validation with its bare-string error bodies, then the
plan of lmconform.reference.model rendered as an SSE stream or a JSON body.

Each fault is applied in exactly one place below, so reading that place tells the whole of what the fault
changes: plan faults in `_apply_plan_faults`, argument faults in `_arguments`, tool call delta faults in
`_call_head`, `_indexed`, `_tool_call_deltas` and `_stream_chunks`, chunk envelope faults in `_Envelope.chunk`, usage faults in
`_usage_requested`, SSE framing faults in `_sse`, and request-level faults in `chat_completions`.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from lmconform.reference.model import Plan, ToolCall, arguments_json, decide, request_seed, usage

DEFAULT_MODEL = "lmconform-reference"
ROLES = ("system", "user", "assistant", "tool", "developer")
TOOL_CHOICES = ("none", "auto", "required")

FRAGMENT_CHARS = 8  # characters of arguments per streamed delta
_STALL_SECONDS = 600.0
_PADDING_TOTAL = 1 << 30
_PADDING_LINE = b": " + b"." * ((1 << 16) - 3) + b"\n"
_AFTER_FIRST_EVENT = {
    "chunk-not-json": b"data: processing...\n\n",
    "invalid-utf8": b": \xff\xfe keep-alive\n\n",
}
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


async def chat_completions(request: Request, faults: frozenset[str]) -> Response:
    try:
        body = json.loads(await request.body(), parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        body = None
    if "tool-choice-ignored" in faults and isinstance(body, dict):
        body = {key: value for key, value in body.items() if key != "tool_choice"}
    error = validate(body)
    if error is not None:
        if "server-error-on-bad-input" in faults:
            return PlainTextResponse("Internal Server Error", status_code=500)
        return JSONResponse({"error": error}, status_code=400)

    plan = _apply_plan_faults(decide(body), faults)
    counts = usage(body, plan)
    model = body["model"] if isinstance(body.get("model"), str) and body["model"] else DEFAULT_MODEL
    envelope = _Envelope(request_seed(body), int(time.time()), model, faults)
    streamed = body.get("stream") is True and not ("json-instead-of-sse" in faults and body.get("tools"))
    if not streamed:
        return JSONResponse(_completion_body(plan, counts, envelope))
    chunks = _stream_chunks(plan, counts if _usage_requested(body, faults) else None, envelope)
    return StreamingResponse(_sse(chunks, envelope, request.app.state.stopping), headers=SSE_HEADERS)


def reject_json_constant(name: str) -> Any:
    """NaN and Infinity are not JSON; LM Studio's JSON.parse refuses them, and so must the reference."""
    raise ValueError(f"{name} is not JSON")


def validate(body: Any) -> str | None:
    """The message of the 400 body for this request, or None when it is acceptable. The tool_choice messages are
    LM Studio's word for word; LM Studio's wording for the others is not on record, so they follow its style."""
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    messages = body.get("messages")
    if messages is None:
        return "'messages' field is required"
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or message["role"] not in ROLES:
            return f"'messages[{i}].role' must be one of: {', '.join(ROLES)}"
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "'tools' must be an array"
        for i, tool in enumerate(tools):
            problem = _tool_problem(tool)
            if problem is not None:
                return f"Invalid 'tools[{i}]': {problem}"
    tool_choice = body.get("tool_choice")
    supported = f"Supported string values: {', '.join(TOOL_CHOICES)}"
    if isinstance(tool_choice, str) and tool_choice not in TOOL_CHOICES:
        return f"Invalid tool_choice value: '{tool_choice}'. {supported}"
    if tool_choice is not None and not isinstance(tool_choice, str):
        return f"Invalid tool_choice type: '{_js_typeof(tool_choice)}'. {supported}"
    return None


def _tool_problem(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return "a tool must be an object"
    if tool.get("type") != "function":
        return "'type' must be 'function'"
    function = tool.get("function")
    if not isinstance(function, dict):
        return "'function' must be an object"
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return "'function.name' must be a non-empty string"
    if function.get("parameters") is not None and not isinstance(function["parameters"], dict):
        return "'function.parameters' must be an object"
    return None


def _js_typeof(value: Any) -> str:
    """The type name LM Studio (a JavaScript server) puts in its error: arrays and null are 'object' there."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "object"


def _apply_plan_faults(plan: Plan, faults: frozenset[str]) -> Plan:
    if "empty-response" in faults:
        plan = Plan("", (), "stop")
    if "finish-stop-after-tools" in faults and plan.tool_calls:
        plan = Plan(plan.text, plan.tool_calls, "stop")
    if "finish-reason-missing" in faults:
        plan = Plan(plan.text, plan.tool_calls, None)
    return plan


def _usage_requested(body: dict[str, Any], faults: frozenset[str]) -> bool:
    if "usage-chunk-unrequested" in faults:
        return True
    if "usage-ignored" in faults:
        return False
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


@dataclass(frozen=True)
class _Envelope:
    """What every chunk or body of one response shares."""

    seed: int
    created: int
    model: str
    faults: frozenset[str]

    def fields(self, object_: str, serial: int = 0) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{self.seed + serial}",
            "object": object_,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": self.model,
        }

    def chunk(self, serial: int, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        object_ = "chat.completion" if "object-not-chunk" in self.faults else "chat.completion.chunk"
        fields = self.fields(object_, serial if "chunk-id-changes" in self.faults else 0)
        return {**fields, "choices": choices, **extra}


def _delta_choice(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


def _arguments(call: ToolCall, faults: frozenset[str]) -> str | dict[str, Any]:
    if "arguments-object" in faults:
        return call.arguments
    text = arguments_json(call.arguments)
    return text[1:] if "arguments-invalid-json" in faults else text


def _call_head(call: ToolCall, arguments: str | dict[str, Any], faults: frozenset[str]) -> dict[str, Any]:
    """A tool call with its identity: the non-stream message entry, or the opening delta of a streamed call."""
    head = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}
    if "tool-id-missing" in faults:
        del head["id"]
    return head


def _indexed(entry: dict[str, Any], position: int, faults: frozenset[str]) -> dict[str, Any]:
    if "tool-index-missing" in faults:
        return entry
    index = 0 if "two-calls-one-index" in faults else position
    if "tool-index-one" in faults:
        index += 1
    return {"index": index, **entry}


def _tool_call_deltas(position: int, call: ToolCall, faults: frozenset[str]) -> Iterator[dict[str, Any]]:
    arguments = _arguments(call, faults)
    if isinstance(arguments, dict):
        yield _indexed(_call_head(call, arguments, faults), position, faults)
        return
    yield _indexed(_call_head(call, "", faults), position, faults)
    for end in range(FRAGMENT_CHARS, len(arguments) + FRAGMENT_CHARS, FRAGMENT_CHARS):
        piece = arguments[:end] if "arguments-cumulative" in faults else arguments[end - FRAGMENT_CHARS:end]
        if "id-name-repeated" in faults:
            entry = _call_head(call, piece, faults)
        else:
            entry = {"function": {"arguments": piece}}
        if "type-null-continuation" in faults:
            entry["type"] = None
        yield _indexed(entry, position, faults)


def _stream_chunks(plan: Plan, counts: dict[str, int] | None, envelope: _Envelope) -> list[dict[str, Any]]:
    faults = envelope.faults
    first = {"content": ""} if "role-missing" in faults else {"role": "assistant", "content": ""}
    deltas: list[dict[str, Any]] = [first]
    # Word by word with its spaces, so the pieces concatenate back to the text exactly.
    deltas += ({"content": piece} for piece in re.findall(r"\S+\s*|\s+", plan.text))
    per_call = [list(_tool_call_deltas(position, call, faults)) for position, call in enumerate(plan.tool_calls)]
    if "tool-calls-interleaved" in faults:
        # One delta of each call in turn: legal for index-keyed OpenAI clients, not for the generator order.
        per_call = [[entry for entry in turn if entry is not None] for turn in zip_longest(*per_call)]
    deltas += ({"tool_calls": [entry]} for entries in per_call for entry in entries)
    chunks = [envelope.chunk(serial, [_delta_choice(delta)]) for serial, delta in enumerate(deltas)]
    chunks.append(envelope.chunk(len(chunks), [_delta_choice({}, plan.finish_reason)]))
    if counts is not None:
        chunks.append(envelope.chunk(len(chunks), [], usage=counts))
    return chunks


def _completion_body(plan: Plan, counts: dict[str, int], envelope: _Envelope) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": plan.text if plan.text or not plan.tool_calls else None}
    if plan.tool_calls:
        faults = envelope.faults
        message["tool_calls"] = [_call_head(call, _arguments(call, faults), faults) for call in plan.tool_calls]
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": plan.finish_reason}
    return {**envelope.fields("chat.completion"), "choices": [choice], "usage": counts}


def _event(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"


async def _sse(chunks: list[dict[str, Any]], envelope: _Envelope, stopping: threading.Event) -> AsyncIterator[bytes]:
    faults = envelope.faults
    if "body-too-large" in faults:
        # Lazily, line by line: the client is meant to give up long before the end.
        for _ in range(_PADDING_TOTAL // len(_PADDING_LINE)):
            if stopping.is_set():
                return
            yield _PADDING_LINE
    for serial, chunk in enumerate(chunks):
        yield _event(chunk)
        if serial == 0:
            for fault, line in _AFTER_FIRST_EVENT.items():
                if fault in faults:
                    yield line
            if "stall" in faults:
                await _silence(stopping, _STALL_SECONDS)
                return
    if "no-done" not in faults:
        yield b"data: [DONE]\n\n"
    if "data-after-done" in faults:
        yield _event(envelope.chunk(len(chunks), [_delta_choice({})]))


async def _silence(stopping: threading.Event, seconds: float) -> None:
    """Send nothing until the time is up or the server stops. A client that disconnects ends it sooner: Starlette
    cancels the response when it sees the disconnect."""
    deadline = time.monotonic() + seconds
    while not stopping.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
