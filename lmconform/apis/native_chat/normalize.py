"""LM Studio's own chat API (`POST /api/v1/chat`, LM Studio 0.4.0+: a result object, or its event stream) into the
generation vocabulary.

The stream's events are named after what happens (`chat.start`, `prompt_processing.*`, `reasoning.*`,
`tool_call.*`, `message.*`, `chat.end`); its tools run on the server (plugins and MCP servers), so a tool call is
reported with its arguments as one object and its output. In the vocabulary a `message.delta` is text, a
`reasoning.delta` reasoning, and a tool call is started with its tool's name, has its arguments object as one
fragment (its JSON text), and ends when it succeeds or fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lmconform.normalize.data_events import TypedEvent, read_typed_events
from lmconform.normalize.events import (
    MISSING,
    End,
    Generation,
    Source,
    Text,
    ToolCallArgumentsFragment,
    ToolCallEnded,
    ToolCallFailed,
    ToolCallName,
    ToolCallStarted,
)
from lmconform.normalize.reading import Reading
from lmconform.wire.http import HttpExchange

TEXT_DELTAS = {"message.delta": "content", "reasoning.delta": "reasoning"}


@dataclass
class NativeStream:
    events: list[TypedEvent] = field(default_factory=list)
    generation: Generation = field(default_factory=Generation)

    def of_type(self, kind: str) -> list[TypedEvent]:
        return [event for event in self.events if event.type == kind]

    def result(self) -> dict:
        """The result `chat.end` carries: what the non-stream answer would have been; `{}` when there is none."""
        for event in reversed(self.events):
            if event.type == "chat.end" and isinstance(event.get("result"), dict):
                return event.get("result")
        return {}


def native_result(exchange: HttpExchange) -> dict:
    """The result a client ends up with: the JSON body, or what the stream's `chat.end` carries."""
    if exchange.is_event_stream:
        return exchange.view(normalize_native_stream).result()
    return exchange.json if isinstance(exchange.json, dict) else {}


def response_id(exchange: HttpExchange) -> str | None:
    """The id a later request continues with `previous_response_id` (stored chats only)."""
    found = native_result(exchange).get("response_id")
    return found if isinstance(found, str) and found else None


def continuation(request: dict, turn: dict, previous_id: str | None, call: tuple[str, str] | None,
                 answered: Any = None) -> dict:
    """A further turn's body: the request's fields, `turn`'s instead of its input, continuing `previous_id`. Tools
    run on the server, so no turn answers a call."""
    body = {key: value for key, value in request.items() if key not in ("input", "previous_response_id")}
    body.update(turn)
    if previous_id is not None:
        body["previous_response_id"] = previous_id
    return body


def normalize_native_chat(exchange: HttpExchange) -> Generation:
    if exchange.is_event_stream:
        return exchange.view(normalize_native_stream).generation
    return normalize_native_body(exchange.json)


def _arguments(value: Any) -> Any:
    """A tool call's arguments object as one fragment: its JSON text; anything else as it was sent."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


def normalize_native_stream(exchange: HttpExchange) -> NativeStream:
    stream = NativeStream(read_typed_events(exchange))
    out = stream.generation.events
    call: int | None = None  # the call in progress
    calls = 0
    fragment_sent = False
    for event in stream.events:
        kind = event.type
        if kind in TEXT_DELTAS and isinstance(event.get("content"), str) and event.get("content"):
            out.append(Text(event.get("content"), TEXT_DELTAS[kind], event.source))
        elif kind == "tool_call.start":
            call, calls, fragment_sent = calls, calls + 1, False
            out.append(ToolCallStarted(call, MISSING, None, kind, event.source))
            if event.get("tool") not in (None, ""):
                out.append(ToolCallName(call, event.get("tool"), event.source))
        elif kind == "tool_call.arguments" and call is not None and "arguments" in event.payload:
            out.append(ToolCallArgumentsFragment(call, _arguments(event.get("arguments")), event.source))
            fragment_sent = True
        elif kind == "tool_call.success" and call is not None:
            if not fragment_sent and "arguments" in event.payload:
                out.append(ToolCallArgumentsFragment(call, _arguments(event.get("arguments")), event.source))
            out.append(ToolCallEnded(call, event.source))
            call = None
        elif kind == "tool_call.failure":
            if call is None:  # a call that failed before it started: an invalid name, say
                call, calls = calls, calls + 1
                out.append(ToolCallStarted(call, MISSING, None, kind, event.source))
            out.append(ToolCallFailed(call, str(event.get("reason")), event.source))
            call = None
        elif kind == "chat.end":
            if call is not None:
                out.append(ToolCallFailed(call, "chat.end before the call succeeded or failed", event.source))
                call = None
            result = event.get("result") if isinstance(event.get("result"), dict) else {}
            out.append(End(None, result.get("stats"), event.source))
    return stream


def normalize_native_body(body: Any) -> Generation:
    """A result object: its output items in order."""
    generation = Generation()
    out = generation.events
    if not isinstance(body, dict):
        return generation
    output = body.get("output")
    call = 0
    for position, item in enumerate(output if isinstance(output, list) else []):
        if not isinstance(item, dict):
            continue
        source = Source(f"JSON body output[{position}]", json.dumps(item, ensure_ascii=False, default=repr)[:500])
        channel = {"message": "content", "reasoning": "reasoning"}.get(item.get("type", ""))
        if channel and isinstance(item.get("content"), str) and item["content"]:
            out.append(Text(item["content"], channel, source))
        elif item.get("type") in ("tool_call", "invalid_tool_call"):
            metadata = item.get("metadata")
            metadata = metadata if isinstance(metadata, dict) else {}
            name = item.get("tool") if item["type"] == "tool_call" else metadata.get("tool_name")
            out.append(ToolCallStarted(call, position, None, item["type"], source))
            if name not in (None, ""):
                out.append(ToolCallName(call, name, source))
            if item["type"] == "tool_call":
                if "arguments" in item:
                    out.append(ToolCallArgumentsFragment(call, _arguments(item["arguments"]), source))
                out.append(ToolCallEnded(call, source))
            else:
                out.append(ToolCallFailed(call, str(item.get("reason")), source))
            call += 1
    out.append(End(None, body.get("stats"), Source("JSON body", "stats")))
    return generation


READING = Reading(normalize_native_chat, continuation, response_id)
