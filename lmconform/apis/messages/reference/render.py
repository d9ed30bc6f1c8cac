"""A Messages answer as Anthropic's API sends it: the message object of a plan, and its event stream, each event
framed as an SSE event named after its type (Anthropic's streaming guide).

The stream opens with `message_start` (the message with no content yet), then a `ping`, then each content block
as `content_block_start`, its deltas and `content_block_stop`, numbered 0, 1, 2… in order; then one
`message_delta` with the stop reason and the output tokens, and `message_stop`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from lmconform.reference.model import Plan, arguments_json, compact_json
from lmconform.reference.wire import FRAGMENT_CHARS

# The chat model's finish reasons in Anthropic's words.
STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def signature_of(thought: str) -> str:
    """Stands in for Anthropic's encrypted signature: opaque, and fixed by the thought it signs."""
    return base64.b64encode(hashlib.sha256(thought.encode()).digest()).decode()


def stopped_at(text: str, stop_sequences: tuple[str, ...]) -> tuple[str, str | None]:
    """The text up to the first stop sequence it holds, and that sequence (None when it holds none)."""
    found = [(text.find(stop), stop) for stop in stop_sequences if stop and stop in text]
    if not found:
        return text, None
    position, stop = min(found)
    return text[:position], stop


def message_object(message_id: str, model: str, plan: Plan, thought: str | None, stop_sequences: tuple[str, ...],
                   input_tokens: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thought is not None:
        content.append({"type": "thinking", "thinking": thought, "signature": signature_of(thought)})
    text, stop_sequence = stopped_at(plan.text, () if plan.tool_calls else stop_sequences)
    if text or not plan.tool_calls:
        content.append({"type": "text", "text": text})
    content += ({"type": "tool_use", "id": f"toolu_{call.id}", "name": call.name, "input": call.arguments}
                for call in plan.tool_calls)
    stop_reason = "stop_sequence" if stop_sequence is not None else STOP_REASONS.get(plan.finish_reason or "", "end_turn")
    written = [text, *(thought.split() if thought else ()), *(arguments_json(c.arguments) for c in plan.tool_calls)]
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": {"input_tokens": input_tokens, "output_tokens": sum(len(part.split()) for part in written)},
    }


def stream_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Every event of the stream in order. Fields a fault removed from the message stay removed."""
    opening = {**message, "content": []}
    if "stop_reason" in message:
        opening["stop_reason"] = None
    if "stop_sequence" in message:
        opening["stop_sequence"] = None
    if isinstance(message.get("usage"), dict):
        opening["usage"] = {**message["usage"], "output_tokens": 0}
    found: list[dict[str, Any]] = [{"type": "message_start", "message": opening}, {"type": "ping"}]
    for index, block in enumerate(message.get("content") or []):
        found.append({"type": "content_block_start", "index": index, "content_block": _opened(block)})
        found += ({"type": "content_block_delta", "index": index, "delta": delta} for delta in _deltas(block))
        found.append({"type": "content_block_stop", "index": index})
    closing: dict[str, Any] = {"type": "message_delta",
                               "delta": {key: message[key] for key in ("stop_reason", "stop_sequence") if key in message}}
    if isinstance(message.get("usage"), dict):
        closing["usage"] = {"output_tokens": message["usage"].get("output_tokens")}
    return [*found, closing, {"type": "message_stop"}]


def _opened(block: dict[str, Any]) -> dict[str, Any]:
    """A block as `content_block_start` announces it: nothing generated yet."""
    empty: dict[str, dict[str, Any]] = {"text": {"text": ""}, "thinking": {"thinking": ""}, "tool_use": {"input": {}}}
    signature = {"signature": ""} if block.get("type") == "thinking" and "signature" in block else {}
    return {**block, **empty.get(block.get("type", ""), {}), **signature}


def _deltas(block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type", "")
    if kind == "tool_use":
        given = block.get("input")  # the arguments object, or whatever a fault left in its place
        streamed = given if isinstance(given, str) else compact_json(given)
        pieces = [streamed[start:start + FRAGMENT_CHARS] for start in range(0, len(streamed), FRAGMENT_CHARS)]
        return [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
    name = {"text": "text", "thinking": "thinking"}.get(kind)
    if name is None or not isinstance(block.get(name), str):
        return []
    # Word by word with its spaces, so the pieces concatenate back to the text exactly.
    deltas = [{"type": f"{name}_delta", name: word} for word in re.findall(r"\S+\s*|\s+", block[name])]
    if kind == "thinking" and "signature" in block:
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    return deltas


def frame(name: str | None, data: dict[str, Any]) -> bytes:
    """One SSE event; without a name, a data line alone."""
    line = b"data: " + json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"
    return (f"event: {name}\n".encode() if name is not None else b"") + line
