"""A Responses answer as LM Studio sends it: the output items of a plan, the response object that carries them,
and its event stream: the events in order, numbered, each framed as an SSE event named after its type."""

from __future__ import annotations

import base64
import re
import secrets
import time
from typing import Any

from lmconform.apis.responses.reference.validation import Turn
from lmconform.reference.model import Plan, arguments_json, compact_json, piece_logprobs
from lmconform.reference.wire import FRAGMENT_CHARS


def new_id(prefix: str) -> str:
    """Random, so that the same request sent twice makes two responses and two chains."""
    return f"{prefix}_{secrets.token_hex(12)}"


def input_items(body: dict[str, Any], response_id: str) -> list[dict[str, Any]]:
    """The request's input as the items `GET /v1/responses/{id}/input_items` lists: a string is one user message of
    `input_text`; a message's string content becomes that part; every item has an id."""
    given = body.get("input")
    items = [{"type": "message", "role": "user", "content": given}] if isinstance(given, str) else given or []
    listed = []
    for position, item in enumerate(items):
        item = dict(item)
        if isinstance(item.get("content"), str):
            kind = "output_text" if item.get("role") == "assistant" else "input_text"
            item["content"] = [{"type": kind, "text": item["content"]}]
        if item.get("role") is not None:
            item.setdefault("type", "message")
            item.setdefault("status", "completed")
        item.setdefault("id", f"msg_{response_id.removeprefix('resp_')}_{position}")
        listed.append(item)
    return listed


def with_encrypted_content(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning item with an opaque token for its thought, as `include: ["reasoning.encrypted_content"]` asks.
    OpenAI's token is the thought encrypted; a client sends it back as it came and reads nothing in it, so this one is
    random bytes: a recorded replay then carries nothing of the prompt (a path, a user) in a form no scrubber reads."""
    if item["type"] != "reasoning":
        return item
    return {**item, "encrypted_content": base64.b64encode(secrets.token_bytes(48)).decode()}


def output_items(plan: Plan, thought: str | None, logprobs: bool = False,
                 alternatives: int = 0) -> list[dict[str, Any]]:
    """The output of a plan; with `logprobs`, its text's log probabilities, one entry a streamed word, each with
    `alternatives` alternatives."""
    items: list[dict[str, Any]] = []
    if thought is not None:
        reasoning = [{"type": "reasoning_text", "text": thought}]
        items.append({"id": new_id("rs"), "type": "reasoning", "summary": [], "content": reasoning})
    if plan.refusal:
        items.append({"id": new_id("msg"), "type": "message", "role": "assistant", "status": "completed",
                      "content": [{"type": "refusal", "refusal": plan.refusal}]})
    elif plan.text or not plan.tool_calls:
        pieces = [piece_logprobs(word, alternatives) for word in _words(plan.text)] if logprobs else []
        text = [{"type": "output_text", "text": plan.text, "annotations": [], "logprobs": pieces}]
        items.append({"id": new_id("msg"), "type": "message", "role": "assistant", "status": "completed",
                      "content": text})
    items += ({"id": new_id("fc"), "type": "function_call", "call_id": f"call_{secrets.randbelow(10**16):016d}",
               "name": call.name, "arguments": arguments_json(call.arguments), "status": "completed"}
              for call in plan.tool_calls)
    return items


def response_object(turn: Turn, output: list[dict[str, Any]], counts: dict[str, int],
                    truncated: bool = False) -> dict[str, Any]:
    """The finished response, with every member OpenAI's Response object requires: the nullable ones null, the
    request's settings echoed (the tools with `strict` and `parameters`, which OpenAI's echo always carries).
    `truncated` when the output stopped at max_output_tokens, which makes it incomplete."""
    now = int(time.time())
    return {
        "id": new_id("resp"),
        "object": "response",
        "created_at": now,
        "completed_at": None if truncated else now,
        "status": "incomplete" if truncated else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "model": turn.model,
        "instructions": turn.instructions,
        "output": output,
        "previous_response_id": turn.previous_id,
        "tools": [_echoed(tool) for tool in turn.tools],
        "tool_choice": turn.tool_choice,
        "parallel_tool_calls": turn.parallel_tool_calls is not False,
        "temperature": turn.temperature,
        "top_p": turn.top_p,
        "metadata": turn.metadata or {},
        "prompt_cache_key": turn.prompt_cache_key,
        "usage": {"input_tokens": counts["prompt_tokens"], "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": counts["completion_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": counts["total_tokens"]},
    }


def compaction_object(conversation: list[dict[str, Any]], input_tokens: int) -> dict[str, Any]:
    """OpenAI's answer to `POST /v1/responses/compact`: the conversation as one opaque `compaction` item."""
    opaque = base64.b64encode(as_json(conversation)).decode()
    return {"id": new_id("resp"), "object": "response.compaction", "created_at": int(time.time()),
            "output": [{"id": new_id("cmp"), "type": "compaction", "encrypted_content": opaque}],
            "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 0,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input_tokens}}


def _echoed(tool: dict[str, Any]) -> dict[str, Any]:
    return {"parameters": None, "strict": None, **tool} if tool.get("type") == "function" else tool


def as_json(value: Any) -> bytes:
    return compact_json(value).encode()


def stream_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """Every event of the stream in order, without sequence numbers."""
    # Nothing is counted, nor cut, nor finished yet.
    opening = {**response, "status": "in_progress", "completed_at": None, "incomplete_details": None, "output": [],
               "usage": None}
    found: list[dict[str, Any]] = [{"type": "response.created", "response": opening}, {"type": "response.in_progress", "response": opening}]
    for index, item in enumerate(response["output"]):
        found.append({"type": "response.output_item.added", "output_index": index, "item": _opened(item)})
        found += _content_events(item, index)
        found.append({"type": "response.output_item.done", "output_index": index, "item": item})
    terminal = "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    found.append({"type": terminal, "response": response})
    return found


def numbered(events: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Each event with its sequence number, and the name of its SSE event: its type."""
    return [(event["type"], {**event, "sequence_number": number}) for number, event in enumerate(events)]


def frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: ".encode() + as_json(data) + b"\n\n"


def _words(text: str) -> list[str]:
    """Word by word with its spaces, so the pieces concatenate back to the text exactly."""
    return re.findall(r"\S+\s*|\s+", text)


def _opened(item: dict[str, Any]) -> dict[str, Any]:
    """The item as `response.output_item.added` announces it: in progress, with nothing generated yet."""
    empty: dict[str, dict[str, Any]] = {"function_call": {"arguments": ""}, "custom_tool_call": {"input": ""}}
    return {**item, **empty.get(item["type"], {"content": []}), **({"status": "in_progress"} if "status" in item else {})}


def _deltas(kind: str, where: dict[str, Any], streamed: str) -> list[dict[str, Any]]:
    """A call's arguments or input in pieces, as its `.delta` events carry them."""
    pieces = (streamed[start:start + FRAGMENT_CHARS] for start in range(0, len(streamed), FRAGMENT_CHARS))
    return [{"type": f"{kind}.delta", **where, "delta": piece} for piece in pieces]


def _content_events(item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """The events between an item's added and done: its deltas, then what they add up to."""
    where: dict[str, Any] = {"item_id": item["id"], "output_index": index}
    if item["type"] == "function_call":
        return [*_deltas("response.function_call_arguments", where, item["arguments"]),
                {"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"],
                 "name": item["name"]}]
    if item["type"] == "custom_tool_call":
        return [*_deltas("response.custom_tool_call_input", where, item["input"]),
                {"type": "response.custom_tool_call_input.done", **where, "input": item["input"]}]
    if not item["content"]:  # a message a fault emptied: added and done, nothing between
        return []
    where["content_index"] = 0
    part = item["content"][0]
    if part["type"] == "refusal":
        return [{"type": "response.content_part.added", **where, "part": {**part, "refusal": ""}},
                *({"type": "response.refusal.delta", **where, "delta": word} for word in _words(part["refusal"])),
                {"type": "response.refusal.done", **where, "refusal": part["refusal"]},
                {"type": "response.content_part.done", **where, "part": part}]
    words = _words(part["text"])
    if item["type"] == "reasoning":
        return [*({"type": "response.reasoning_text.delta", **where, "delta": word} for word in words),
                {"type": "response.reasoning_text.done", **where, "text": part["text"]}]
    # `logprobs` as OpenAI sends it: openai-python's stream helper reads it from every text event; each delta
    # carries its word's, when they were asked for.
    logprobs = part.get("logprobs") or []
    per_word = [[entry] for entry in logprobs] if len(logprobs) == len(words) else [[] for _ in words]
    return [{"type": "response.content_part.added", **where, "part": {**part, "text": "", "logprobs": []}},
            *({"type": "response.output_text.delta", **where, "delta": word, "logprobs": entries}
              for word, entries in zip(words, per_word)),
            {"type": "response.output_text.done", **where, "text": part["text"], "logprobs": logprobs},
            {"type": "response.content_part.done", **where, "part": part}]
