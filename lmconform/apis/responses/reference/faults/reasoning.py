"""Faults of reasoning in a Responses answer: the reasoning item's text written into the answer instead."""

from __future__ import annotations

from typing import Any

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.registry import fault


@fault("responses-reasoning-in-text", stages.OBJECT, api="responses",
       summary="the reasoning comes as `<think>…</think>` at the start of the message's `output_text`, with no "
               "reasoning item (stream and non-stream)",
       seen_in="adapters that turn a chat completion's content into a Response without a reasoning parser")
def reasoning_in_text(response: dict[str, Any]) -> dict[str, Any]:
    output = response.get("output") or []
    thoughts = [part["text"] for item in output if item["type"] == "reasoning" for part in item["content"]]
    if not thoughts:
        return response

    def tagged(item: dict[str, Any]) -> dict[str, Any]:
        parts = [{**part, "text": f"<think>{' '.join(thoughts)}</think>{part['text']}"}
                 if part.get("type") == "output_text" else part for part in item["content"]]
        return {**item, "content": parts} if item["type"] == "message" else item

    return {**response, "output": [tagged(item) for item in output if item["type"] != "reasoning"]}
