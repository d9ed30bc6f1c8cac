"""Chat completions (streamed chunks or a JSON body) into the generation vocabulary.

The streamed view also keeps every chunk and every `delta.tool_calls` entry as sent, because some properties
(the index of a delta, an id repeated in a later chunk) exist only at that level.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lmconform.normalize.data_events import DataEvent, read_data_events
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
from lmconform.normalize.usage import COMPLETION_USAGE
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpExchange

# vLLM's and LM Studio's (gpt-oss) name, and the DeepSeek-style one vLLM used before its rename.
REASONING_FIELDS = ("reasoning", "reasoning_content")
ChatChunk = DataEvent  # a chunk of a chat stream is a data event of it; what its JSON says is read below


def chunk_choices(chunk: ChatChunk) -> list:
    found = chunk.payload.get("choices") if isinstance(chunk.payload, dict) else None
    return found if isinstance(found, list) else []


def channel_texts(holder: dict) -> list[tuple[str, str, str]]:
    """(field, channel, text) of each text a delta or message carries, in the order clients show them: reasoning,
    the answer, a refusal. A server sending both reasoning names with the same text (to serve clients of either)
    said it once."""
    found: list[tuple[str, str, str]] = []
    for name in REASONING_FIELDS:
        text = holder.get(name)
        if isinstance(text, str) and text and not any(text == seen for _, _, seen in found):
            found.append((name, "reasoning", text))
    for name in ("content", "refusal"):
        if isinstance(holder.get(name), str) and holder[name]:
            found.append((name, name, holder[name]))
    return found


def first_delta(chunk: ChatChunk) -> dict:
    for choice in chunk_choices(chunk):
        if isinstance(choice, dict) and choice.get("index", 0) == 0 and isinstance(choice.get("delta"), dict):
            return choice["delta"]
    return {}


@dataclass(frozen=True)
class ToolDelta:
    """One `delta.tool_calls[position]` entry as sent, and the call the normaliser assigned it to."""

    chunk: ChatChunk
    position: int
    entry: Any
    call: int
    starts_call: bool


@dataclass
class ChatStream:
    chunks: list[ChatChunk] = field(default_factory=list)
    tool_deltas: list[ToolDelta] = field(default_factory=list)
    generation: Generation = field(default_factory=Generation)

    # Sorted once (checks ask for them again and again, and a stream may have tens of thousands of chunks): the
    # chunks are set by normalize_chat_stream before anyone asks and never change after.
    _sorted: tuple[list[ChatChunk], list[ChatChunk]] | None = field(default=None, repr=False, compare=False)

    def data_chunks(self) -> list[ChatChunk]:
        """Chunks before [DONE] whose payload is a JSON object, error events left out."""
        return self._before_done()[0]

    def error_events(self) -> list[ChatChunk]:
        """Events before [DONE] that report a failure instead of carrying a chunk: `{"error": …}` without choices
        (how vLLM and LM Studio report a failure after the stream started)."""
        return self._before_done()[1]

    def _before_done(self) -> tuple[list[ChatChunk], list[ChatChunk]]:
        if self._sorted is None:
            data: list[ChatChunk] = []
            errors: list[ChatChunk] = []
            for chunk in self.chunks:
                if chunk.done:
                    break
                if isinstance(chunk.payload, dict):
                    (errors if is_error_event(chunk.payload) else data).append(chunk)
            self._sorted = data, errors
        return self._sorted


def is_error_event(payload: Any) -> bool:
    return isinstance(payload, dict) and bool(payload.get("error")) and "choices" not in payload


class _StreamNormaliser:
    """Assigns tool deltas to calls and emits events in wire order."""

    def __init__(self) -> None:
        self.stream = ChatStream()
        self.events = self.stream.generation.events
        self.call_of_key: dict[Any, int] = {}
        self.call_id: dict[int, Any] = {}
        self.current: int | None = None  # the call that received the latest tool event
        self.ended: set[int] = set()

    def close_current(self, source: Source) -> None:
        if self.current is not None and self.current not in self.ended:
            self.events.append(ToolCallEnded(self.current, source))
            self.ended.add(self.current)
        self.current = None

    def text(self, text: str, channel: str, source: Source) -> None:
        self.close_current(source)
        self.events.append(Text(text, channel, source))

    def tool_delta(self, chunk: ChatChunk, position: int, entry: Any) -> None:
        source = chunk.source
        if not isinstance(entry, dict):
            self.stream.tool_deltas.append(ToolDelta(chunk, position, entry, -1, False))
            return
        index = entry.get("index", MISSING)
        key = index if isinstance(index, (int, str, float, type(None))) or index is MISSING else repr(index)
        new_id = entry.get("id")
        known = self.call_of_key.get(key)
        # A different id at an index already in use is a different call: two calls sharing an index.
        starts = known is None or (bool(new_id) and bool(self.call_id.get(known)) and new_id != self.call_id[known])
        if starts:
            self.close_current(source)
            call = len(self.call_id)
            self.call_of_key[key] = call
            self.call_id[call] = new_id
            self.events.append(ToolCallStarted(call, index, new_id, entry.get("type", MISSING), source))
        else:
            assert known is not None, "a delta that starts no call continues a known one"
            call = known
            if not self.call_id.get(call) and new_id:
                self.call_id[call] = new_id
            if self.current != call:
                self.close_current(source)
        self.current = call
        self.stream.tool_deltas.append(ToolDelta(chunk, position, entry, call, starts))
        function = entry.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name")
        if name not in (None, ""):
            self.events.append(ToolCallName(call, name, source))
        arguments = function.get("arguments")
        if arguments not in (None, ""):
            self.events.append(ToolCallArgumentsFragment(call, arguments, source))

    def finish(self, exchange: HttpExchange, finish_reason: Any, usage: Any, end_source: Source | None) -> None:
        if exchange.error:
            source = end_source or Source("end of body", exchange.error)
            if self.current is not None and self.current not in self.ended:
                self.events.append(ToolCallFailed(self.current, exchange.error, source))
            return
        fallback = Source("end of body", exchange.body_excerpt(0))
        self.close_current(end_source or fallback)
        self.events.append(End(finish_reason, usage, end_source or fallback))


def normalize_chat_stream(exchange: HttpExchange) -> ChatStream:
    normaliser = _StreamNormaliser()
    stream = normaliser.stream
    stream.chunks = exchange.view(read_data_events)
    finish_reason: Any = None
    usage: Any = None
    end_source: Source | None = None
    for chunk in stream.data_chunks():
        if chunk.payload.get("usage") is not None:
            usage = chunk.payload["usage"]
        for choice in chunk_choices(chunk):
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            for _, channel, text in channel_texts(delta):
                normaliser.text(text, channel, chunk.source)
            tool_calls = delta.get("tool_calls")
            if isinstance(tool_calls, list):
                for position, entry in enumerate(tool_calls):
                    normaliser.tool_delta(chunk, position, entry)
            if choice.get("finish_reason") is not None:
                finish_reason = choice["finish_reason"]
                end_source = chunk.source
    normaliser.finish(exchange, finish_reason, usage, end_source)
    return stream


def normalize_chat(exchange: HttpExchange) -> Generation:
    """A chat completions answer in the generation vocabulary, from whichever form arrived (stream or body)."""
    if exchange.is_event_stream:
        return exchange.view(normalize_chat_stream).generation
    return normalize_chat_body(exchange.json)


def normalize_chat_body(body: Any) -> Generation:
    """A non-stream `chat.completion` body: one call per `message.tool_calls` item, arguments as one fragment."""
    generation = Generation()
    events = generation.events
    if not isinstance(body, dict):
        return generation
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}

    def source(path: str, value: Any) -> Source:
        return Source(f"JSON body {path}", json.dumps(value, ensure_ascii=False, default=repr)[:500])

    for field_name, channel, text in channel_texts(message):
        events.append(Text(text, channel, source(f"message.{field_name}", text)))
    tool_calls = message.get("tool_calls")
    for call, entry in enumerate(tool_calls if isinstance(tool_calls, list) else []):
        entry = entry if isinstance(entry, dict) else {}
        where = source(f"choices[0].message.tool_calls[{call}]", entry)
        function = entry.get("function")
        function = function if isinstance(function, dict) else {}
        events.append(ToolCallStarted(call, entry.get("index", MISSING), entry.get("id"), entry.get("type", MISSING), where))
        if function.get("name") not in (None, ""):
            events.append(ToolCallName(call, function["name"], where))
        if "arguments" in function:
            events.append(ToolCallArgumentsFragment(call, function["arguments"], where))
        events.append(ToolCallEnded(call, where))
    events.append(End(choice.get("finish_reason"), body.get("usage"), source("choices[0]", choice)))
    return generation


def chat_logprobs(exchange: HttpExchange) -> list | None:
    """The first choice's `logprobs.content` entries: of the body, or of each chunk in turn; None when no choice
    carries any (`logprobs` null or left out)."""
    if exchange.is_event_stream:
        choices = [choice for chunk in exchange.view(normalize_chat_stream).data_chunks()
                   for choice in chunk_choices(chunk) if isinstance(choice, dict) and choice.get("index", 0) == 0]
    else:
        body = exchange.json
        given = body.get("choices") if isinstance(body, dict) else None
        choices = given[:1] if isinstance(given, list) else []
    found = [choice["logprobs"]["content"] for choice in choices if isinstance(choice, dict)
             and isinstance(choice.get("logprobs"), dict) and isinstance(choice["logprobs"].get("content"), list)]
    return [entry for entries in found for entry in entries] if found else None


def continuation(request: dict, turn: dict, previous_id: str | None, call: tuple[str, str] | None,
                 answered: Exchange | None = None) -> dict:
    """A further turn's body: the request with `turn`'s fields instead. Chat completions keeps no conversation and
    its cases answer no call in a further turn: a turn without fields sends the same request again, so that its
    two answers can be compared (`seed`)."""
    return {**request, **turn}


READING = Reading(normalize_chat, continuation, usage=COMPLETION_USAGE, logprobs=chat_logprobs)
