"""A Responses answer as LM Studio sends it: the output items of a plan, the response object that carries them,
and its event stream: the events in order, numbered, each framed as an SSE event named after its type.

Each fault is applied in exactly one place below: previous-id-echo-wrong and call-id-missing in
`response_object`, arguments-done-mismatch in `_finished`, arguments-done-missing in `_content_events`,
duplicate-output-index, events-out-of-order and no-response-completed in `_events`, the sequence number faults in
`_sequenced`, and event-field-mismatch in `_frame`.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any

from lmconform.reference.chat import FRAGMENT_CHARS
from lmconform.reference.model import Plan, arguments_json
from lmconform.reference.responses_validation import Turn


def new_id(prefix: str) -> str:
    """Random, so that the same request sent twice makes two responses and two chains."""
    return f"{prefix}_{secrets.token_hex(12)}"


def output_items(plan: Plan, thought: str | None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if thought is not None:
        reasoning = [{"type": "reasoning_text", "text": thought}]
        items.append({"id": new_id("rs"), "type": "reasoning", "summary": [], "content": reasoning})
    if plan.text or not plan.tool_calls:
        text = [{"type": "output_text", "text": plan.text, "annotations": []}]
        items.append({"id": new_id("msg"), "type": "message", "role": "assistant", "status": "completed",
                      "content": text})
    items += ({"id": new_id("fc"), "type": "function_call", "call_id": f"call_{secrets.randbelow(10**16):016d}",
               "name": call.name, "arguments": arguments_json(call.arguments), "status": "completed"}
              for call in plan.tool_calls)
    return items


def response_object(turn: Turn, output: list[dict[str, Any]], counts: dict[str, int],
                     faults: frozenset[str]) -> dict[str, Any]:
    if "call-id-missing" in faults:
        output = [{key: value for key, value in item.items() if key != "call_id"} for item in output]
    return {
        "id": new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": turn.model,
        "output": output,
        "previous_response_id": None if "previous-id-echo-wrong" in faults else turn.previous_id,
        "tools": turn.tools,
        "tool_choice": turn.tool_choice,
        "usage": {"input_tokens": counts["prompt_tokens"], "output_tokens": counts["completion_tokens"],
                  "total_tokens": counts["total_tokens"], "output_tokens_details": {"reasoning_tokens": 0}},
    }


def as_json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def stream_frames(response: dict[str, Any], faults: frozenset[str]) -> list[bytes]:
    return [_frame(event, faults) for event in _sequenced(_events(response, faults), faults)]


def _events(response: dict[str, Any], faults: frozenset[str]) -> list[dict[str, Any]]:
    """Every event of the stream in order, without sequence numbers."""
    opening = {**response, "status": "in_progress", "output": [], "usage": None}  # nothing is counted yet
    events = [{"type": "response.created", "response": opening}, {"type": "response.in_progress", "response": opening}]
    finished = []
    for position, item in enumerate(response["output"]):
        index = 0 if "duplicate-output-index" in faults and position == 1 else position
        events.append({"type": "response.output_item.added", "output_index": index, "item": _opened(item)})
        done = _finished(item, faults)
        events += _content_events(item, done, index, faults)
        events.append({"type": "response.output_item.done", "output_index": index, "item": done})
        finished.append(done)
    if "events-out-of-order" in faults:
        first_delta = next(i for i, event in enumerate(events) if event["type"].endswith(".delta"))
        events.insert(2, events.pop(first_delta))  # before the first response.output_item.added
    if "no-response-completed" not in faults:
        events.append({"type": "response.completed", "response": {**response, "output": finished}})
    return events


def _opened(item: dict[str, Any]) -> dict[str, Any]:
    """The item as `response.output_item.added` announces it: in progress, with nothing generated yet."""
    empty = {"arguments": ""} if item["type"] == "function_call" else {"content": []}
    return {**item, **empty, **({"status": "in_progress"} if "status" in item else {})}


def _finished(item: dict[str, Any], faults: frozenset[str]) -> dict[str, Any]:
    """The item as `response.output_item.done` and `response.completed` carry it."""
    if "arguments-done-mismatch" in faults and item["type"] == "function_call":
        return {**item, "arguments": arguments_json({**json.loads(item["arguments"]), "extra": True})}
    return item


def _content_events(item: dict[str, Any], done: dict[str, Any], index: int,
                    faults: frozenset[str]) -> list[dict[str, Any]]:
    """The events between an item's added and done: deltas of `item`, then the finished `done`."""
    where: dict[str, Any] = {"item_id": item["id"], "output_index": index}
    if item["type"] == "function_call":
        streamed = item["arguments"]
        pieces = (streamed[start:start + FRAGMENT_CHARS] for start in range(0, len(streamed), FRAGMENT_CHARS))
        deltas = [{"type": "response.function_call_arguments.delta", **where, "delta": piece} for piece in pieces]
        if "arguments-done-missing" in faults:
            return deltas
        return [*deltas, {"type": "response.function_call_arguments.done", **where, "arguments": done["arguments"],
                          "name": done["name"]}]
    where["content_index"] = 0
    part = done["content"][0]
    # Word by word with its spaces, so the pieces concatenate back to the text exactly.
    words = re.findall(r"\S+\s*|\s+", part["text"])
    if item["type"] == "reasoning":
        return [*({"type": "response.reasoning_text.delta", **where, "delta": word} for word in words),
                {"type": "response.reasoning_text.done", **where, "text": part["text"]}]
    # `logprobs` as OpenAI sends it: openai-python's stream helper reads it from every text event.
    return [{"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
            *({"type": "response.output_text.delta", **where, "delta": word, "logprobs": []} for word in words),
            {"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []},
            {"type": "response.content_part.done", **where, "part": part}]


def _sequenced(events: list[dict[str, Any]], faults: frozenset[str]) -> list[dict[str, Any]]:
    if "sequence-number-missing" in faults:
        return events
    numbers = list(range(len(events)))
    if "sequence-not-increasing" in faults:
        numbers[2] = numbers[1]
    return [{**event, "sequence_number": number} for event, number in zip(events, numbers, strict=True)]


def _frame(event: dict[str, Any], faults: frozenset[str]) -> bytes:
    name = event["type"]
    if "event-field-mismatch" in faults and name.endswith(".delta"):
        name = "message"
    return f"event: {name}\ndata: ".encode() + as_json(event) + b"\n\n"
