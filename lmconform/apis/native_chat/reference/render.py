"""A native chat answer as LM Studio's REST docs show it: the result object, and its event stream.

The stream opens with `chat.start`, reads the prompt (`prompt_processing.start`, `.progress`, `.end`), then
each output item in order — reasoning as `reasoning.start`, deltas, `reasoning.end`; a tool call as
`tool_call.start`, `tool_call.arguments` (an object), `tool_call.success` (with its output); the message as
`message.start`, deltas, `message.end` — and closes with `chat.end`, which carries the whole result. Every event is
named after its `type`.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any


def new_response_id() -> str:
    return f"resp_{secrets.token_hex(12)}"


def result_object(model: str, output: list[dict[str, Any]], counts: dict[str, int],
                  response_id: str | None) -> dict[str, Any]:
    reasoning = sum(len(item["content"].split()) for item in output if item["type"] == "reasoning")
    stats = {"input_tokens": counts["prompt_tokens"], "total_output_tokens": counts["completion_tokens"] + reasoning,
             "reasoning_output_tokens": reasoning, "tokens_per_second": 50.0, "time_to_first_token_seconds": 0.01}
    return {"model_instance_id": model, "output": output, "stats": stats,
            **({"response_id": response_id} if response_id is not None else {})}


def _words(text: str) -> list[str]:
    # Word by word with its spaces, so the pieces concatenate back to the text exactly.
    return re.findall(r"\S+\s*|\s+", text)


def stream_events(result: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [
        {"type": "chat.start", "model_instance_id": result.get("model_instance_id")},
        {"type": "prompt_processing.start"},
        {"type": "prompt_processing.progress", "progress": 0.5},
        {"type": "prompt_processing.progress", "progress": 1.0},
        {"type": "prompt_processing.end"},
    ]
    for item in result.get("output") or []:
        if item.get("type") in ("reasoning", "message"):
            phase = item["type"]
            found += [{"type": f"{phase}.start"},
                      *({"type": f"{phase}.delta", "content": word} for word in _words(item.get("content") or "")),
                      {"type": f"{phase}.end"}]
        elif item.get("type") == "tool_call":
            found += [{"type": "tool_call.start", **_members(item, "tool", "provider_info")},
                      {"type": "tool_call.arguments", **_members(item, "tool", "arguments", "provider_info")},
                      {"type": "tool_call.success", **_members(item, "tool", "arguments", "output", "provider_info")}]
    return [*found, {"type": "chat.end", "result": result}]


def _members(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The members of an output item an event repeats; those a fault removed from the item stay removed."""
    return {key: item[key] for key in keys if key in item}


def frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: ".encode() + json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() \
        + b"\n\n"
