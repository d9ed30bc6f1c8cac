"""Anthropic's Messages API (`/v1/messages`: a message object, or its event stream) into the generation vocabulary.

The stream is kept as parsed events too, and as the content blocks they open and close: the grammar of a
Messages stream (`message_start`, blocks numbered by `index`, `message_delta`, `message_stop`) exists only at
that level. Anthropic's words map onto the vocabulary as follows: a `thinking` block is reasoning text, a
`tool_use` block is a tool call whose `input_json_delta` fragments are its argument fragments (a block that sends
none has the arguments it opened with, `{}` when it opened with none), and `stop_reason` is the finish.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lmconform.normalize.data_events import TypedEvent, read_typed_events
from lmconform.normalize.events import (
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
from lmconform.normalize.usage import UsageFields
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpExchange

# The delta each kind of block takes (Anthropic's streaming guide); a delta of another kind is lost to clients.
DELTAS_OF_BLOCK = {"text": ("text_delta", "citations_delta"), "tool_use": ("input_json_delta",),
                   "thinking": ("thinking_delta", "signature_delta")}
TEXT_OF_DELTA = {"text_delta": ("text", "content"), "thinking_delta": ("thinking", "reasoning")}
STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                "model_context_window_exceeded")


@dataclass
class Block:
    """One content block of a stream: its start, its deltas and its stop, as sent."""

    index: Any
    start: TypedEvent
    deltas: list[TypedEvent] = field(default_factory=list)
    stops: list[TypedEvent] = field(default_factory=list)
    call: int | None = None  # the tool call it is in the generation, for a tool_use block

    @property
    def type(self) -> Any:
        return self.start.part("content_block").get("type")


@dataclass
class MessagesStream:
    events: list[TypedEvent] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)  # in the order they started
    generation: Generation = field(default_factory=Generation)

    def of_type(self, kind: str) -> list[TypedEvent]:
        return [event for event in self.events if event.type == kind]

    def final_message(self) -> dict:
        """The message the stream spells out: message_start's (none without one), with each block's deltas
        applied and the last message_delta's stop reason and usage."""
        starts = self.of_type("message_start")
        message = dict(starts[0].part("message")) if starts else {}
        message["content"] = [_accumulated(block) for block in self.blocks]
        usage = dict(message.get("usage") or {}) if isinstance(message.get("usage"), dict) else {}
        for event in self.of_type("message_delta"):
            message.update({key: value for key, value in event.part("delta").items()
                            if key in ("stop_reason", "stop_sequence")})
            usage.update(event.part("usage"))
        message["usage"] = usage
        return message


def _accumulated(block: Block) -> dict:
    content = dict(block.start.part("content_block"))
    arguments = ""
    for event in block.deltas:
        delta = event.part("delta")
        kind = delta.get("type")
        if kind in TEXT_OF_DELTA and isinstance(delta.get(TEXT_OF_DELTA[kind][0]), str):
            key = TEXT_OF_DELTA[kind][0]
            content[key] = (content.get(key) if isinstance(content.get(key), str) else "") + delta[key]
        elif kind == "signature_delta":
            content["signature"] = delta.get("signature")
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            arguments += delta["partial_json"]
    if content.get("type") == "tool_use" and arguments:
        try:
            content["input"] = json.loads(arguments)
        except ValueError:
            content["input"] = arguments
    return content


def message_object(exchange: HttpExchange) -> dict:
    """The message a client ends up with: the JSON body, or the stream accumulated; `{}` when there is none."""
    if exchange.is_event_stream:
        return exchange.view(normalize_messages_stream).final_message()
    return exchange.json if isinstance(exchange.json, dict) else {}


def normalize_messages(exchange: HttpExchange) -> Generation:
    """A Messages answer in the generation vocabulary, from whichever form arrived (stream or body)."""
    if exchange.is_event_stream:
        return exchange.view(normalize_messages_stream).generation
    return normalize_messages_body(exchange.json)


def _arguments_opened_with(content_block: dict) -> str:
    """The arguments of a tool_use block that streams no fragment: the `input` it opened with, `{}` if none."""
    opened = content_block.get("input", {})
    return opened if isinstance(opened, str) else json.dumps(opened, ensure_ascii=False)


def normalize_messages_stream(exchange: HttpExchange) -> MessagesStream:
    stream = MessagesStream(read_typed_events(exchange))
    out = stream.generation.events
    by_index: dict[Any, Block] = {}
    block: Block | None  # the block an event belongs to: none for a delta or a stop of an index never started
    fragments_seen: set[int] = set()
    open_calls: list[int] = []
    stop_reason: Any = None
    usage: dict = {}
    ended_by: TypedEvent | None = None

    def close(block: Block, source: Source) -> None:
        if block.call in open_calls:
            if block.call not in fragments_seen:
                out.append(ToolCallArgumentsFragment(block.call, _arguments_opened_with(block.start.part(
                    "content_block")), source))
            out.append(ToolCallEnded(block.call, source))
            open_calls.remove(block.call)

    for event in stream.events:
        kind = event.type
        index = event.get("index")
        key = index if isinstance(index, (int, str, float, type(None))) else repr(index)
        if kind == "message_start":
            started_usage = event.part("message").get("usage")
            usage.update(started_usage if isinstance(started_usage, dict) else {})
        elif kind == "content_block_start":
            block = Block(index, event)
            stream.blocks.append(block)
            by_index[key] = block
            content = event.part("content_block")
            if content.get("type") == "tool_use":
                block.call = len([b for b in stream.blocks if b.call is not None])
                out.append(ToolCallStarted(block.call, index, content.get("id"), content.get("type"), event.source))
                if content.get("name") not in (None, ""):
                    out.append(ToolCallName(block.call, content["name"], event.source))
                open_calls.append(block.call)
            for name, channel in (("text", "content"), ("thinking", "reasoning")):
                if content.get("type") == name and isinstance(content.get(name), str) and content[name]:
                    out.append(Text(content[name], channel, event.source))
        elif kind == "content_block_delta":
            block = by_index.get(key)
            if block is not None:
                block.deltas.append(event)
            delta = event.part("delta")
            if delta.get("type") in TEXT_OF_DELTA:
                name, channel = TEXT_OF_DELTA[delta["type"]]
                if isinstance(delta.get(name), str) and delta[name]:
                    out.append(Text(delta[name], channel, event.source))
            elif delta.get("type") == "input_json_delta" and block is not None and block.call is not None:
                if delta.get("partial_json") not in (None, ""):
                    out.append(ToolCallArgumentsFragment(block.call, delta.get("partial_json"), event.source))
                    fragments_seen.add(block.call)
        elif kind == "content_block_stop":
            block = by_index.get(key)
            if block is not None:
                block.stops.append(event)
                close(block, event.source)
        elif kind == "message_delta":
            stop_reason = event.part("delta").get("stop_reason", stop_reason)
            usage.update(event.part("usage"))
            ended_by = event
        elif kind == "message_stop":
            ended_by = event
        elif kind == "error":
            for call in open_calls:
                out.append(ToolCallFailed(call, f"an error event: {event.event.data[:200]}", event.source))
            return stream
    if exchange.error:
        for call in open_calls:
            out.append(ToolCallFailed(call, exchange.error, Source("end of body", exchange.error)))
        return stream
    end_source = ended_by.source if ended_by else Source("end of body", exchange.body_excerpt(0))
    for block in stream.blocks:  # a block never stopped is over when the message is
        close(block, end_source)
    out.append(End(stop_reason, usage or None, end_source))
    return stream


def normalize_messages_body(body: Any) -> Generation:
    """A message object: its content blocks in order."""
    generation = Generation()
    out = generation.events
    if not isinstance(body, dict):
        return generation
    content = body.get("content")
    call = 0
    for position, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict):
            continue
        source = Source(f"JSON body content[{position}]", json.dumps(block, ensure_ascii=False, default=repr)[:500])
        for name, channel in (("text", "content"), ("thinking", "reasoning")):
            if block.get("type") == name and isinstance(block.get(name), str) and block[name]:
                out.append(Text(block[name], channel, source))
        if block.get("type") == "tool_use":
            out.append(ToolCallStarted(call, position, block.get("id"), block.get("type"), source))
            if block.get("name") not in (None, ""):
                out.append(ToolCallName(call, block["name"], source))
            if "input" in block:
                given = block["input"]
                out.append(ToolCallArgumentsFragment(call, given if not isinstance(given, dict) else json.dumps(
                    given, ensure_ascii=False), source))
            out.append(ToolCallEnded(call, source))
            call += 1
    out.append(End(body.get("stop_reason"), body.get("usage"),
                   Source("JSON body", f"stop_reason {body.get('stop_reason')!r}")))
    return generation


def continuation(request: dict, turn: dict, previous_id: str | None, call: tuple[str, str] | None,
                 answered: Exchange | None = None) -> dict:
    """A further turn's body. The Messages API keeps no conversation: a turn that answers a tool call resends the
    request's messages, the answer as the assistant's turn, and a user turn with the `tool_result` for the call's
    id; `turn`'s fields replace the request's."""
    body = {**request, **turn}
    if call is not None and isinstance(answered, HttpExchange):
        content = [block for block in message_object(answered).get("content") or [] if isinstance(block, dict)]
        result = {"type": "tool_result", "tool_use_id": call[0], "content": call[1]}
        body["messages"] = [*(request.get("messages") or []), {"role": "assistant", "content": content},
                            {"role": "user", "content": [result]}]
    return body


# Anthropic counts input and output apart, with no total; cache reads are not part of input_tokens.
MESSAGES_USAGE = UsageFields("input_tokens", "output_tokens")
READING = Reading(normalize_messages, continuation, usage=MESSAGES_USAGE)
