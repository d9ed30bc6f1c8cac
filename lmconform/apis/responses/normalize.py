"""`/v1/responses` (a response object, or its event stream) into the generation vocabulary.

The event stream is kept as parsed events too: the grammar of the Responses API (items opened and closed,
indexes, sequence numbers) exists only at that level.
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
from lmconform.normalize.usage import RESPONSE_USAGE
from lmconform.wire.http import HttpExchange

TERMINAL_EVENTS = ("response.completed", "response.failed", "response.incomplete")
TEXT_DELTAS = {"response.output_text.delta": "content", "response.reasoning_text.delta": "reasoning",
               "response.reasoning_summary_text.delta": "reasoning", "response.refusal.delta": "refusal"}
# The text of a message's content part, by its type: the answer, or the model's refusal.
MESSAGE_PARTS = {"output_text": ("text", "content"), "refusal": ("refusal", "refusal")}


@dataclass
class ResponsesStream:
    events: list[TypedEvent] = field(default_factory=list)
    generation: Generation = field(default_factory=Generation)

    def final_response(self) -> dict | None:
        """The response object of the terminal event, as clients that wait for the end read it."""
        for event in reversed(self.events):
            if event.type in TERMINAL_EVENTS and isinstance(event.get("response"), dict):
                return event.get("response")
        return None


def response_object(exchange: HttpExchange) -> dict:
    """The response object a client ends up with: the JSON body, or the stream's terminal event's response;
    `{}` when there is none."""
    if exchange.is_event_stream:
        return exchange.view(normalize_responses_stream).final_response() or {}
    return exchange.json if isinstance(exchange.json, dict) else {}


def response_id(exchange: HttpExchange) -> str | None:
    """The id a later turn chains to with previous_response_id; None when the answer has none."""
    answer_id = response_object(exchange).get("id")
    return answer_id if isinstance(answer_id, str) and answer_id else None


def continuation(request: dict, turn: dict, previous_id: str | None, call: tuple[str, str] | None,
                 answered: Any = None) -> dict:
    """A further turn's body: the request's fields, but `turn`'s instead of its input and previous_response_id;
    `call` (call_id, output) answers a function call with a function_call_output item. The answer that made the
    call (`answered`) is the server's to remember: it is not sent again."""
    body = {key: value for key, value in request.items() if key not in ("input", "previous_response_id")}
    body.update(turn)
    if call is not None:
        body["input"] = [{"type": "function_call_output", "call_id": call[0], "output": call[1]}]
    if previous_id is not None:
        body["previous_response_id"] = previous_id
    return body


def normalize_responses(exchange: HttpExchange) -> Generation:
    """A Responses answer in the generation vocabulary, from whichever form arrived (stream or body)."""
    if exchange.is_event_stream:
        return exchange.view(normalize_responses_stream).generation
    return normalize_responses_body(exchange.json)


# The output items that are calls the client runs: a function's (a namespace's functions included) and a custom tool's.
CALL_ITEMS = ("function_call", "custom_tool_call")


def arguments_of(item: dict[str, Any]) -> Any:
    """A call's arguments as the generation reads them: a function's as sent; a custom tool's free-text `input` as
    the one argument of a function of one string, `{"input": …}` (what a server that runs it as a function sees)."""
    if item.get("type") == "custom_tool_call":
        return json.dumps({"input": item["input"]}, ensure_ascii=False) if isinstance(item.get("input"), str) else None
    return item.get("arguments")


def normalize_responses_stream(exchange: HttpExchange) -> ResponsesStream:
    stream = ResponsesStream(read_typed_events(exchange))
    out = stream.generation.events
    call_of_item: dict[Any, int] = {}  # item id (or output index) -> call number
    fragments_seen: set[int] = set()
    open_calls: list[int] = []
    call: int | None  # the call an event belongs to, if any

    def item_key(event: TypedEvent) -> Any:
        return event.get("item_id") or ("output_index", event.get("output_index"))

    for event in stream.events:
        kind = event.type
        if kind == "response.output_item.added" and isinstance(event.get("item"), dict):
            item = event.get("item")
            if item.get("type") in CALL_ITEMS:
                call = len(call_of_item)
                call_of_item[item.get("id") or ("output_index", event.get("output_index"))] = call
                call_of_item.setdefault(("output_index", event.get("output_index")), call)
                out.append(ToolCallStarted(call, event.get("output_index"), item.get("call_id"), item.get("type"),
                                           event.source))
                if item.get("name"):
                    out.append(ToolCallName(call, item["name"], event.source))
                open_calls.append(call)
        elif kind in TEXT_DELTAS and isinstance(event.get("delta"), str) and event.get("delta"):
            out.append(Text(event.get("delta"), TEXT_DELTAS[kind], event.source))
        elif kind == "response.function_call_arguments.delta":
            call = call_of_item.get(item_key(event), call_of_item.get(("output_index", event.get("output_index"))))
            if call is not None and event.get("delta") not in (None, ""):
                out.append(ToolCallArgumentsFragment(call, event.get("delta"), event.source))
                fragments_seen.add(call)
        elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            item = event.get("item")
            call = call_of_item.get(item.get("id")) if item.get("id") else None
            if call is None:
                call = call_of_item.get(("output_index", event.get("output_index")))
            if item.get("type") in CALL_ITEMS and call is not None and call in open_calls:
                # A call whose arguments came whole (no deltas: "a tool with no arguments may send none")
                # is still one fragment of the generation; a custom tool's input is read whole, at its end.
                arguments = arguments_of(item)
                if call not in fragments_seen and arguments not in (None, ""):
                    out.append(ToolCallArgumentsFragment(call, arguments, event.source))
                out.append(ToolCallEnded(call, event.source))
                open_calls.remove(call)
        elif kind in TERMINAL_EVENTS:
            response = event.get("response") if isinstance(event.get("response"), dict) else {}
            for call in open_calls:
                out.append(ToolCallFailed(call, f"{kind} before the call's item was done", event.source))
            open_calls.clear()
            out.append(End(response.get("status"), response.get("usage"), event.source))
    return stream


def normalize_responses_body(body: Any) -> Generation:
    """A response object: its output items in order."""
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
        if item.get("type") == "message":
            for part in item.get("content") or []:
                key, channel = MESSAGE_PARTS.get(part.get("type", ""), ("", "")) if isinstance(part, dict) else ("", "")
                if key and isinstance(part.get(key), str) and part[key]:
                    out.append(Text(part[key], channel, source))
        elif item.get("type") == "reasoning":
            for part in (item.get("content") or []) + (item.get("summary") or []):
                if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                    out.append(Text(part["text"], "reasoning", source))
        elif item.get("type") in CALL_ITEMS:
            out.append(ToolCallStarted(call, position, item.get("call_id"), item.get("type"), source))
            if item.get("name") not in (None, ""):
                out.append(ToolCallName(call, item["name"], source))
            if "arguments" in item or item.get("type") == "custom_tool_call":
                out.append(ToolCallArgumentsFragment(call, arguments_of(item), source))
            out.append(ToolCallEnded(call, source))
            call += 1
    out.append(End(body.get("status"), body.get("usage"), Source("JSON body", f"status {body.get('status')!r}")))
    return generation


def responses_logprobs(exchange: HttpExchange) -> list | None:
    """The `logprobs` entries of the output text: of each `response.output_text.delta` of a stream in turn, or of
    each output_text part of a body; None when none of them has the member."""
    if exchange.is_event_stream:
        holders = [event.payload for event in exchange.view(normalize_responses_stream).events
                   if event.type == "response.output_text.delta"]
    else:
        body = exchange.json if isinstance(exchange.json, dict) else {}
        items = [item for item in body.get("output") or [] if isinstance(item, dict) and item.get("type") == "message"]
        holders = [part for item in items for part in item.get("content") or []
                   if isinstance(part, dict) and part.get("type") == "output_text"]
    found = [holder["logprobs"] for holder in holders if isinstance(holder.get("logprobs"), list)]
    return [entry for entries in found for entry in entries] if found else None


READING = Reading(normalize_responses, continuation, response_id, RESPONSE_USAGE, responses_logprobs)
