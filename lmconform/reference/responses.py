"""`POST /v1/responses` and `GET /v1/responses/{id}` as LM Studio answers them: the request validated
(lmconform.reference.responses_validation), conversations chained by `previous_response_id` through
lmconform.reference.store, and the plan of lmconform.reference.model rendered as a response object or as its
event stream (lmconform.reference.responses_render).

A conversation is kept as chat messages, so the chat model answers it unchanged; its recall rule is what makes
a server's memory of earlier turns observable, and its word count of the whole conversation is the usage.

Each fault is applied in exactly one place: nested-tools-accepted and chain-ignored in `create_response`, the
unknown-previous faults and fork-shares-state in `_chain`, the validation faults in
lmconform.reference.responses_validation and the rendering faults in lmconform.reference.responses_render.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from lmconform.reference.chat import SSE_HEADERS
from lmconform.reference.model import content_text, decide, recall, usage
from lmconform.reference.responses_render import as_json, output_items, response_object, stream_frames
from lmconform.reference.responses_validation import (
    Rejected,
    Turn,
    call_message,
    is_nested_tool,
    json_body,
    turn_of,
)
from lmconform.reference.store import ResponseStore


async def create_response(request: Request, faults: frozenset[str]) -> Response:
    store: ResponseStore = request.app.state.store
    try:
        body = await json_body(request)
        if "nested-tools-accepted" in faults and isinstance(body, dict) and isinstance(body.get("tools"), list):
            # Dropped before validation could reject them or the model could see them.
            body = {**body, "tools": [tool for tool in body["tools"] if not is_nested_tool(tool)]}
        turn = turn_of(body, faults)
        earlier, root = _chain(store, turn.previous_id, faults)
        _check_call_ids(earlier, turn.input)
    except Rejected as rejected:
        return rejected.response()

    conversation = turn.input if "chain-ignored" in faults else [*earlier, *turn.input]
    instructions = [{"role": "system", "content": turn.instructions}] if turn.instructions else []
    # An input of reasoning items alone leaves the model nothing to read: it answers as to an empty prompt.
    chat_body = _chat_body(turn, [*instructions, *conversation] or [{"role": "user", "content": ""}])
    plan = recall(chat_body["messages"]) or decide(chat_body)
    thought = f"Thinking about: {_last_user_text(chat_body['messages'])}" if turn.reasoning else None
    output = output_items(plan, thought)
    response = response_object(turn, output, usage(chat_body, plan), faults)
    if turn.store:
        history = [*conversation, *_as_messages(output)]
        store.add(response["id"], as_json(response), history, root or response["id"])
    if not turn.stream:
        return Response(as_json(response), media_type="application/json")
    return StreamingResponse(iter(stream_frames(response, faults)), headers=SSE_HEADERS)


async def get_response(request: Request, faults: frozenset[str]) -> Response:
    response_id = request.url.path.rsplit("/", 1)[1]
    entry = request.app.state.store.get(response_id)
    if entry is None:
        return Rejected(f"Response with id '{response_id}' not found.", None, None, 404).response()
    return Response(entry.body, media_type="application/json")


def _chain(store: ResponseStore, previous_id: str | None,
           faults: frozenset[str]) -> tuple[Sequence[dict[str, Any]], str | None]:
    """The conversation before this turn and the id that began it; nothing when this turn begins one."""
    if previous_id is None:
        return (), None
    entry = store.get(previous_id)
    if entry is None:
        if "unknown-previous-200" in faults:
            return (), None
        raise Rejected(f"Previous response with id '{previous_id}' not found.", "previous_response_id",
                       "previous_response_not_found", 404 if "unknown-previous-404" in faults else 400)
    if "fork-shares-state" in faults:
        entry = store.newest_of_chain(entry)
    return entry.history, entry.root


def _check_call_ids(earlier: Sequence[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    """A tool result must answer a call made earlier in the chain or echoed in this input."""
    called = {call["id"] for message in (*earlier, *messages) for call in message.get("tool_calls") or ()}
    for message in messages:
        if message["role"] == "tool" and message["tool_call_id"] not in called:
            raise Rejected(f"No tool call found for function call output with call_id {message['tool_call_id']}.",
                           "input", None)


def _chat_body(turn: Turn, messages: list[dict[str, Any]]) -> dict[str, Any]:
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


def _as_messages(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output as the next turn's model reads it; reasoning is not carried over."""
    messages = []
    for item in output:
        if item["type"] == "message":
            messages.append({"role": "assistant", "content": item["content"][0]["text"]})
        elif item["type"] == "function_call":
            messages.append(call_message(item["call_id"], item["name"], item["arguments"]))
    return messages
