"""Faults of reasoning and refusals in Responses: the reasoning item's text written into the answer instead, a previous
turn's reasoning item sent back and refused, a reasoning effort that crashes the server, and a refusal lost."""

from __future__ import annotations

from typing import Any

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.registry import fault, flag

REASONING_INPUT_REFUSED = flag(
    "responses-reasoning-input-refused", api="responses",
    summary="a request whose input carries a `reasoning` item (the previous turn's reasoning sent back) is refused 400",
    seen_in="servers that validate input items against a list without `reasoning`; Codex CLI sends its reasoning "
            "items back on every turn")
REASONING_EFFORT_500 = flag(
    "responses-reasoning-effort-500", api="responses", summary="a request with `reasoning.effort` gets HTTP 500",
    seen_in="servers that pass the option to a chat template or engine without it (lmconform's own reasoning cases)")


def refused_reasoning_item(body: dict[str, Any], faults: frozenset[str]) -> tuple[str, str] | None:
    """The 400 message and its `param` under responses-reasoning-input-refused, or None."""
    items = body.get("input")
    if REASONING_INPUT_REFUSED not in faults or not isinstance(items, list):
        return None
    for position, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "reasoning":
            return f"Invalid input item type 'reasoning' at input.{position}", f"input.{position}.type"
    return None


def effort_crashes(body: dict[str, Any], faults: frozenset[str]) -> bool:
    reasoning = body.get("reasoning")
    return REASONING_EFFORT_500 in faults and isinstance(reasoning, dict) and reasoning.get("effort") is not None


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
        if item["type"] != "message":
            return item  # a call carries no text to tag
        return {**item, "content": [{**part, "text": f"<think>{' '.join(thoughts)}</think>{part['text']}"}
                                    if part.get("type") == "output_text" else part for part in item["content"]]}

    return {**response, "output": [tagged(item) for item in output if item["type"] != "reasoning"]}


@fault("responses-refusal-dropped", stages.OBJECT, api="responses",
       summary="a refusal comes as an empty message: its `refusal` part, and so its `response.refusal.*` events, "
               "dropped (stream and non-stream)",
       seen_in="adapters that build the message from a chat completion's `content` alone; LiteLLM loses a streamed "
               "chat refusal the same way (fixtures/targets/litellm-reference.toml)")
def refusal_dropped(response: dict[str, Any]) -> dict[str, Any]:
    def without_refusal(item: dict[str, Any]) -> dict[str, Any]:
        if item["type"] != "message":
            return item
        return {**item, "content": [part for part in item["content"] if part.get("type") != "refusal"]}

    return {**response, "output": [without_refusal(item) for item in response.get("output") or []]}
