"""`POST /v1/responses` and `GET /v1/responses/{id}` as LM Studio answers them: Zod validation reported in
OpenAI-style error objects, conversations chained by `previous_response_id` through
lmconform.reference.store, and the plan of lmconform.reference.model rendered as a response object or as its
event stream.

A conversation is kept as chat messages, so the chat model answers it unchanged; its recall rule is what makes
a server's memory of earlier turns observable, and its word count of the whole conversation is the usage.

Each fault is applied in exactly one place below: nested-tools-accepted and chain-ignored in `create_response`,
flattened-tools-rejected in `_tool`, function-call-output-rejected in `_input_item`, the unknown-previous faults
and fork-shares-state in `_chain`, previous-id-echo-wrong and call-id-missing in `_response_object`,
arguments-done-mismatch in `_finished`, arguments-done-missing in `_content_events`, duplicate-output-index,
events-out-of-order and no-response-completed in `_events`, the sequence number faults in `_sequenced`, and
event-field-mismatch in `_frame`.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.reference.chat import DEFAULT_MODEL, FRAGMENT_CHARS, SSE_HEADERS, reject_json_constant
from lmconform.reference.model import Plan, arguments_json, content_text, decide, recall, usage
from lmconform.reference.store import MAX_BODY_BYTES, ResponseStore

ROLES = ("user", "system", "developer", "assistant")
TOOL_CHOICES = ("none", "auto", "required")
EFFORTS = ("low", "medium", "high")
TEXT_PARTS = ("input_text", "output_text")
ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning")

_ABSENT = object()  # a key not in the body, which Zod reports as "Required" where null is a wrong type


class _Rejected(Exception):
    """A request answered with an OpenAI-style error object instead of a response."""

    def __init__(self, message: str, param: str | None, code: str | None, status: int = 400) -> None:
        super().__init__(message)
        self.error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
        self.status = status

    def response(self) -> Response:
        return JSONResponse({"error": self.error}, status_code=self.status)


@dataclass(frozen=True)
class _Turn:
    """A valid request. `input` is in chat messages; `tools` and `tool_choice` are as given, to be echoed."""

    input: list[dict[str, Any]]
    instructions: str | None
    tools: list[dict[str, Any]]
    tool_choice: str | dict[str, Any]
    parallel_tool_calls: bool | None
    previous_id: str | None
    reasoning: bool
    store: bool
    stream: bool
    model: str


async def create_response(request: Request, faults: frozenset[str]) -> Response:
    store: ResponseStore = request.app.state.store
    try:
        body = await _json_body(request)
        if "nested-tools-accepted" in faults and isinstance(body, dict) and isinstance(body.get("tools"), list):
            # Dropped before validation could reject them or the model could see them.
            body = {**body, "tools": [tool for tool in body["tools"] if not _nested(tool)]}
        turn = _turn(body, faults)
        earlier, root = _chain(store, turn.previous_id, faults)
        _check_call_ids(earlier, turn.input)
    except _Rejected as rejected:
        return rejected.response()

    conversation = turn.input if "chain-ignored" in faults else [*earlier, *turn.input]
    instructions = [{"role": "system", "content": turn.instructions}] if turn.instructions else []
    # An input of reasoning items alone leaves the model nothing to read: it answers as to an empty prompt.
    chat_body = _chat_body(turn, [*instructions, *conversation] or [{"role": "user", "content": ""}])
    plan = recall(chat_body["messages"]) or decide(chat_body)
    thought = f"Thinking about: {_last_user_text(chat_body['messages'])}" if turn.reasoning else None
    output = _output(plan, thought)
    response = _response_object(turn, output, usage(chat_body, plan), faults)
    if turn.store:
        history = [*conversation, *_as_messages(output)]
        store.add(response["id"], _json(response), history, root or response["id"])
    if not turn.stream:
        return Response(_json(response), media_type="application/json")
    frames = [_frame(event, faults) for event in _sequenced(_events(response, faults), faults)]
    return StreamingResponse(iter(frames), headers=SSE_HEADERS)


async def get_response(request: Request, faults: frozenset[str]) -> Response:
    response_id = request.url.path.rsplit("/", 1)[1]
    entry = request.app.state.store.get(response_id)
    if entry is None:
        return _Rejected(f"Response with id '{response_id}' not found.", None, None, 404).response()
    return Response(entry.body, media_type="application/json")


async def _json_body(request: Request) -> Any:
    """The parsed body, read no further than the cap: the store's memory bound rests on it."""
    received = bytearray()
    async for piece in request.stream():
        received += piece
        if len(received) > MAX_BODY_BYTES:
            raise _Rejected(f"Request body is larger than {MAX_BODY_BYTES} bytes.", None, "request_too_large", 413)
    try:
        return json.loads(received, parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        raise _Rejected("Request body must be valid JSON.", None, None) from None


# --- validation ------------------------------------------------------------------------------------------------
# LM Studio validates with Zod and reports its first issue: message, code and dotted path. Its wording is on record
# for a nested tool (see `_tool`); the other messages are Zod's defaults for the same kinds of issue.


def _zod_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array"}.get(type(value), "object")


def _field(container: dict[str, Any], key: str, expected: str, param: str, required: bool = False) -> Any:
    """The value of an optional (absent or null gives None) or required field of one JSON type."""
    value = container.get(key, _ABSENT)
    if value is _ABSENT and required:
        raise _Rejected("Required", param, "invalid_type")
    if value is _ABSENT or (value is None and not required):
        return None
    if _zod_type(value) != expected:
        raise _Rejected(f"Expected {expected}, received {_zod_type(value)}", param, "invalid_type")
    return value


def _enum(value: Any, allowed: Sequence[str], param: str) -> str:
    expected = " | ".join(f"'{option}'" for option in allowed)
    if value is _ABSENT:
        raise _Rejected("Required", param, "invalid_type")
    if not isinstance(value, str):
        raise _Rejected(f"Expected {expected}, received {_zod_type(value)}", param, "invalid_type")
    if value not in allowed:
        raise _Rejected(f"Invalid enum value. Expected {expected}, received '{value}'", param, "invalid_enum_value")
    return value


def _turn(body: Any, faults: frozenset[str]) -> _Turn:
    if not isinstance(body, dict):
        raise _Rejected(f"Expected object, received {_zod_type(body)}", None, "invalid_type")
    given = body.get("input", _ABSENT)
    if given is _ABSENT:
        raise _Rejected("Required", "input", "invalid_type")
    if isinstance(given, str):
        messages = [{"role": "user", "content": given}]
    elif isinstance(given, list) and given:
        messages = [message for i, item in enumerate(given) if (message := _input_item(i, item, faults))]
    elif isinstance(given, list):
        raise _Rejected("Array must contain at least 1 element(s)", "input", "too_small")
    else:
        raise _Rejected("Invalid input", "input", "invalid_union")
    tools = [_tool(i, tool, faults) for i, tool in enumerate(_field(body, "tools", "array", "tools") or [])]
    effort = (_field(body, "reasoning", "object", "reasoning") or {}).get("effort")
    if effort is not None:
        _enum(effort, EFFORTS, "reasoning.effort")
    return _Turn(
        input=messages,
        instructions=_field(body, "instructions", "string", "instructions"),
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice")),
        parallel_tool_calls=_field(body, "parallel_tool_calls", "boolean", "parallel_tool_calls"),
        previous_id=_field(body, "previous_response_id", "string", "previous_response_id"),
        reasoning=effort is not None,
        store=_field(body, "store", "boolean", "store") is not False,
        stream=_field(body, "stream", "boolean", "stream") is True,
        model=_field(body, "model", "string", "model") or DEFAULT_MODEL,
    )


def _input_item(i: int, item: Any, faults: frozenset[str]) -> dict[str, Any] | None:
    """The chat message an input item stands for; None for a reasoning item, which clients that keep their own
    history send back with the rest of the output, and which the model does not read."""
    param = f"input.{i}"
    if not isinstance(item, dict):
        raise _Rejected(f"Expected object, received {_zod_type(item)}", param, "invalid_type")
    kind = item.get("type", "message")
    if kind == "message":
        role = _enum(item.get("role", _ABSENT), ROLES, f"{param}.role")
        return {"role": role, "content": _message_text(item.get("content", _ABSENT), f"{param}.content")}
    if kind == "function_call":
        call_id, name, arguments = (_field(item, key, "string", f"{param}.{key}", required=True)
                                    for key in ("call_id", "name", "arguments"))
        return _call_message(call_id, name, arguments)
    if kind == "function_call_output":
        if "function-call-output-rejected" in faults:
            raise _Rejected("Unsupported input item type: 'function_call_output'.", "input", "unsupported_value")
        call_id = _field(item, "call_id", "string", f"{param}.call_id", required=True)
        return {"role": "tool", "tool_call_id": call_id,
                "content": _field(item, "output", "string", f"{param}.output", required=True)}
    if kind == "reasoning":
        return None
    expected = " | ".join(f"'{option}'" for option in ITEM_TYPES)
    raise _Rejected(f"Invalid discriminator value. Expected {expected}", f"{param}.type", "invalid_union_discriminator")


def _message_text(content: Any, param: str) -> str:
    if isinstance(content, str):
        return content
    if content is _ABSENT:
        raise _Rejected("Required", param, "invalid_type")
    if not isinstance(content, list):
        raise _Rejected("Invalid input", param, "invalid_union")
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in TEXT_PARTS or not isinstance(part.get("text"), str):
            raise _Rejected("Invalid input", f"{param}.{j}", "invalid_union")
    return content_text(content)


def _nested(tool: Any) -> bool:
    """A tool in the chat form, `{"type": "function", "function": {...}}`."""
    return isinstance(tool, dict) and "function" in tool


def _tool(i: int, tool: Any, faults: frozenset[str]) -> dict[str, Any]:
    """A valid flattened tool. The chat form fails at the missing `name`, word for word as LM Studio reports it."""
    param = f"tools.{i}"
    if not isinstance(tool, dict):
        raise _Rejected(f"Expected object, received {_zod_type(tool)}", param, "invalid_type")
    if tool.get("type") != "function":
        raise _Rejected("Invalid discriminator value. Expected 'function'", f"{param}.type",
                        "invalid_union_discriminator")
    if "flattened-tools-rejected" in faults and not _nested(tool):
        raise _Rejected("Required", f"{param}.function", "invalid_type")
    if not _field(tool, "name", "string", f"{param}.name", required=True):
        raise _Rejected("String must contain at least 1 character(s)", f"{param}.name", "too_small")
    _field(tool, "description", "string", f"{param}.description")
    _field(tool, "parameters", "object", f"{param}.parameters")
    return tool


def _tool_choice(choice: Any) -> str | dict[str, Any]:
    if choice is None:
        return "auto"
    if choice in TOOL_CHOICES:
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return choice
    raise _Rejected("Invalid input", "tool_choice", "invalid_union")


# --- the conversation ----------------------------------------------------------------------------------------


def _chain(store: ResponseStore, previous_id: str | None,
           faults: frozenset[str]) -> tuple[Sequence[dict[str, Any]], str | None]:
    """The conversation before this turn and the id that began it; nothing when this turn begins one."""
    if previous_id is None:
        return (), None
    entry = store.get(previous_id)
    if entry is None:
        if "unknown-previous-200" in faults:
            return (), None
        raise _Rejected(f"Previous response with id '{previous_id}' not found.", "previous_response_id",
                        "previous_response_not_found", 404 if "unknown-previous-404" in faults else 400)
    if "fork-shares-state" in faults:
        entry = store.newest_of_chain(entry)
    return entry.history, entry.root


def _check_call_ids(earlier: Sequence[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    """A tool result must answer a call made earlier in the chain or echoed in this input."""
    called = {call["id"] for message in (*earlier, *messages) for call in message.get("tool_calls") or ()}
    for message in messages:
        if message["role"] == "tool" and message["tool_call_id"] not in called:
            raise _Rejected(f"No tool call found for function call output with call_id {message['tool_call_id']}.",
                            "input", None)


def _call_message(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _chat_body(turn: _Turn, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn as the chat model reads it: tools in the chat form, and a forced function as the only tool,
    required (the chat model knows no forced function)."""
    tools, choice = turn.tools, turn.tool_choice
    if isinstance(choice, dict):
        tools, choice = [tool for tool in tools if tool["name"] == choice["name"]], "required"
    functions = [{key: tool[key] for key in ("name", "description", "parameters") if key in tool} for tool in tools]
    return {"messages": messages, "tools": [{"type": "function", "function": function} for function in functions],
            "tool_choice": choice, "parallel_tool_calls": turn.parallel_tool_calls}


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    return next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")


# --- the response ------------------------------------------------------------------------------------------------


def _new_id(prefix: str) -> str:
    """Random, so that the same request sent twice makes two responses and two chains."""
    return f"{prefix}_{secrets.token_hex(12)}"


def _output(plan: Plan, thought: str | None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if thought is not None:
        reasoning = [{"type": "reasoning_text", "text": thought}]
        items.append({"id": _new_id("rs"), "type": "reasoning", "summary": [], "content": reasoning})
    if plan.text or not plan.tool_calls:
        text = [{"type": "output_text", "text": plan.text, "annotations": []}]
        items.append({"id": _new_id("msg"), "type": "message", "role": "assistant", "status": "completed",
                      "content": text})
    items += ({"id": _new_id("fc"), "type": "function_call", "call_id": f"call_{secrets.randbelow(10**16):016d}",
               "name": call.name, "arguments": arguments_json(call.arguments), "status": "completed"}
              for call in plan.tool_calls)
    return items


def _as_messages(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output as the next turn's model reads it; reasoning is not carried over."""
    messages = []
    for item in output:
        if item["type"] == "message":
            messages.append({"role": "assistant", "content": item["content"][0]["text"]})
        elif item["type"] == "function_call":
            messages.append(_call_message(item["call_id"], item["name"], item["arguments"]))
    return messages


def _response_object(turn: _Turn, output: list[dict[str, Any]], counts: dict[str, int],
                     faults: frozenset[str]) -> dict[str, Any]:
    if "call-id-missing" in faults:
        output = [{key: value for key, value in item.items() if key != "call_id"} for item in output]
    return {
        "id": _new_id("resp"),
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


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# --- the event stream ----------------------------------------------------------------------------------------


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
    return f"event: {name}\ndata: ".encode() + _json(event) + b"\n\n"
