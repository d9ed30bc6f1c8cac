"""`POST /v1/responses`, and `GET` and `DELETE /v1/responses/{id}` and its input items, as LM Studio answers them: the request validated
(lmconform.apis.responses.reference.validation), conversations chained by `previous_response_id` through
lmconform.reference.store, and the plan of lmconform.reference.model rendered as a response object or as its
event stream (lmconform.apis.responses.reference.render).

A conversation is kept as chat messages, so the chat model answers it unchanged; its recall rule is what makes
a server's memory of earlier turns observable, and its word count of the whole conversation is the usage.

`create_response` reads as the order in which an answer is made; each `apply` there is the one place where the
faults of that stage (lmconform.apis.responses.reference.faults.defects) change it. The faults that are flags are asked about
where they change what the server does: the chain faults here, the validation faults in their module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.apis.responses import API
from lmconform.apis.responses.reference import stages
from lmconform.apis.responses.reference.faults.compaction import (
    COMPACT_AS_RESPONSE,
    COMPACTION_NOT_OFFERED,
    INPUT_TOKENS_LAST_ITEM,
)
from lmconform.apis.responses.reference.faults.coverage import RESPONSES_OUTPUT_OFF_SCHEMA, STRUCTURED_OUTPUT_IGNORED
from lmconform.apis.responses.reference.faults.defects import (
    CHAIN_IGNORED,
    FORK_SHARES_STATE,
    UNKNOWN_PREVIOUS_200,
    UNKNOWN_PREVIOUS_404,
)
from lmconform.apis.responses.reference.faults.lifecycle import PREFILL_COMMENT_KEEPALIVES, after_comment_keepalives
from lmconform.apis.responses.reference.faults.reasoning import effort_crashes, refused_reasoning_item
from lmconform.apis.responses.reference.faults.replay import mid_history_crashes, remembered
from lmconform.apis.responses.reference.faults.store import (
    DELETE_KEEPS_RESPONSE,
    DELETION_BARE,
    INPUT_ITEMS_EMPTY,
    STORE_FALSE_IGNORED,
    STREAM_STORED_AS_CREATED,
)
from lmconform.apis.responses.reference.faults.tool_types import GRAMMAR_INPUT_UNCONSTRAINED
from lmconform.apis.responses.reference.render import (
    as_json,
    compaction_object,
    frame,
    input_items,
    numbered,
    output_items,
    response_object,
    stream_events,
    with_encrypted_content,
)
from lmconform.apis.responses.reference.streams import render
from lmconform.apis.responses.reference.tool_types import as_tool_items, call_of, chat_functions
from lmconform.apis.responses.reference.validation import Rejected, Turn, json_body, turn_of
from lmconform.reference.faults.registry import apply
from lmconform.reference.faults.server import UNKNOWN_ROUTE_200
from lmconform.reference.model import content_text, decide, off_schema, prompt_words, recall, usage
from lmconform.reference.overflow import overflow_answered, overflow_cut, overflow_refusal
from lmconform.reference.refusal import refusal_message, schema_refusal
from lmconform.reference.store import ResponseStore, store_of
from lmconform.reference.streams import Form, requested_form, streamed, untagged
from lmconform.reference.streams import thought as generated_thought
from lmconform.reference.wire import SSE_HEADERS, unknown_route
from lmconform.vocabulary import LONG_PROMPT_WORDS


async def create_response(request: Request, faults: frozenset[str], store: ResponseStore | None = None) -> Response:
    """`store`: where the conversation is kept and looked up, the server's unless a WebSocket connection keeps its
    own in front of it (lmconform.apis.responses.reference.websocket)."""
    store = store or store_of(request, API.name)
    try:
        body = apply(stages.REQUEST, faults, await json_body(request))
        turn = turn_of(body, faults)
        broken = schema_refusal(API.name, body, faults)
        if broken is not None:
            raise Rejected(refusal_message(broken), broken.pointer.lstrip("/").replace("/", ".") or None, broken.keyword)
        refused = refused_reasoning_item(body, faults)
        if refused is not None:
            raise Rejected(*refused, "invalid_value")
        if effort_crashes(body, faults) or mid_history_crashes(body, faults):
            raise Rejected("Internal server error", None, None, 500)
        earlier, root = _chain(store, turn.previous_id, faults)
        _check_call_ids(earlier, turn.input)
        form = _form(request, body, faults)
    except Rejected as rejected:
        rejected.error = apply(stages.ERROR, faults, rejected.error)
        return apply(stages.REFUSAL, faults, rejected.response())

    conversation = remembered(turn.input if CHAIN_IGNORED in faults else [*earlier, *turn.input], turn.store, faults)
    if form is not None:
        conversation = untagged(conversation)
    chat_body = _chat_body(turn, _prompt(turn, conversation))
    if STRUCTURED_OUTPUT_IGNORED in faults:
        chat_body.pop("response_format", None)
    overflow = overflow_refusal(chat_body["messages"], turn.stream, faults, lambda words: Rejected(
        "Your input exceeds the context window of this model. Please adjust your input and try again.", "input",
        "context_length_exceeded").response())
    if overflow is not None:
        return overflow
    plan = overflow_answered(recall(chat_body["messages"]) or decide(chat_body), chat_body["messages"], faults)
    if RESPONSES_OUTPUT_OFF_SCHEMA in faults:
        plan = off_schema(chat_body, plan)
    prompt = _last_user_text(chat_body["messages"])
    # A generated form's answer also reasons when the prompt asks it to think (lmconform.reference.streams).
    thought = f"Thinking about: {prompt}" if turn.reasoning else generated_thought(prompt) if form else None
    output = as_tool_items(output_items(plan, thought, turn.logprobs, turn.alternatives), turn.tools,
                           GRAMMAR_INPUT_UNCONSTRAINED not in faults)
    if turn.encrypted_reasoning:
        output = [with_encrypted_content(item) for item in output]
    truncated = plan.finish_reason == "length"
    response = apply(stages.OBJECT, faults, response_object(turn, output, usage(chat_body, plan), truncated))
    if turn.store or STORE_FALSE_IGNORED in faults or store.keeps_unstored:
        history = [*conversation, *_as_messages(output)]
        stored = apply(stages.STORED, faults, response)
        if turn.stream and STREAM_STORED_AS_CREATED in faults:
            stored = {**stored, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
        store.add(response["id"], as_json(stored), history, root or response["id"], input_items(body, response["id"]))
    if not turn.stream:
        return Response(as_json(apply(stages.BODY, faults, response)), media_type="application/json")
    if form is not None:
        return streamed(render(stream_events(response), form), SSE_HEADERS, request)
    events = apply(stages.EVENTS, faults, stream_events(response))
    frames = apply(stages.FRAMES, faults, overflow_cut(numbered(events), chat_body["messages"], faults))
    sent = apply(stages.SSE, faults, [frame(name, data) for name, data in frames])
    if PREFILL_COMMENT_KEEPALIVES in faults and prompt_words(chat_body["messages"]) >= LONG_PROMPT_WORDS:
        return StreamingResponse(after_comment_keepalives(sent, request.app.state.stopping), headers=SSE_HEADERS)
    return StreamingResponse(iter(sent), headers=SSE_HEADERS)


async def count_input_tokens(request: Request, faults: frozenset[str]) -> Response:
    """`POST /v1/responses/input_tokens`: the input tokens the same request to `POST /v1/responses` is charged."""
    if COMPACTION_NOT_OFFERED in faults:
        return unknown_route("POST", COUNT_PATH, UNKNOWN_ROUTE_200 in faults)
    try:
        turn = turn_of(await json_body(request), faults)
        earlier, _ = _chain(store_of(request, API.name), turn.previous_id, faults)
    except Rejected as rejected:
        return rejected.response()
    conversation = [*earlier, *turn.input][-1:] if INPUT_TOKENS_LAST_ITEM in faults else [*earlier, *turn.input]
    return JSONResponse({"object": "response.input_tokens", "input_tokens": prompt_words(_prompt(turn, conversation))})


async def compact(request: Request, faults: frozenset[str]) -> Response:
    """`POST /v1/responses/compact`: the conversation so far as one `compaction` item, which a later request sends
    back in place of the items it stands for."""
    if COMPACTION_NOT_OFFERED in faults:
        return unknown_route("POST", COMPACT_PATH, UNKNOWN_ROUTE_200 in faults)
    if COMPACT_AS_RESPONSE in faults:
        return await create_response(request, faults)
    try:
        turn = turn_of(await json_body(request), faults)
        earlier, _ = _chain(store_of(request, API.name), turn.previous_id, faults)
    except Rejected as rejected:
        return rejected.response()
    conversation = [*earlier, *turn.input]
    return Response(as_json(compaction_object(conversation, prompt_words(_prompt(turn, conversation)))),
                    media_type="application/json")


def _prompt(turn: Turn, conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages the model reads: the instructions, then the conversation."""
    instructions = [{"role": "system", "content": turn.instructions}] if turn.instructions else []
    # An input of reasoning items alone leaves the model nothing to read: it answers as to an empty prompt.
    return [*instructions, *conversation] or [{"role": "user", "content": ""}]


def _not_found(response_id: str) -> Response:
    return Rejected(f"Response with id '{response_id}' not found.", None, None, 404).response()


async def get_response(request: Request, faults: frozenset[str]) -> Response:
    response_id = request.url.path.rsplit("/", 1)[1]
    entry = store_of(request, API.name).get(response_id)
    if entry is None:
        return _not_found(response_id)
    return Response(entry.body, media_type="application/json")


async def delete_response(request: Request, faults: frozenset[str]) -> Response:
    """OpenAI's deletion object; the response is gone for GET and for chaining."""
    response_id = request.url.path.rsplit("/", 1)[1]
    store = store_of(request, API.name)
    found = store.get(response_id) is not None if DELETE_KEEPS_RESPONSE in faults else store.delete(response_id)
    if not found:
        return _not_found(response_id)
    return JSONResponse({} if DELETION_BARE in faults else {"id": response_id, "object": "response", "deleted": True})


async def list_input_items(request: Request, faults: frozenset[str]) -> Response:
    """The input items of a stored response as OpenAI's list object, newest first unless `order=asc` (OpenAI's
    default order is `desc`); one page holds them all."""
    response_id = request.url.path.rsplit("/", 2)[1]
    entry = store_of(request, API.name).get(response_id)
    if entry is None:
        return _not_found(response_id)
    items = [] if INPUT_ITEMS_EMPTY in faults else list(entry.input_items)
    if request.query_params.get("order", "desc") != "asc":
        items.reverse()
    return JSONResponse({"object": "list", "data": items, "first_id": items[0]["id"] if items else None,
                         "last_id": items[-1]["id"] if items else None, "has_more": False})


def _form(request: Request, body: Any, faults: frozenset[str]) -> Form | None:
    try:
        return requested_form(request, body, faults)
    except ValueError as error:
        raise Rejected(str(error), None, None) from None


def _chain(store: ResponseStore, previous_id: str | None,
           faults: frozenset[str]) -> tuple[Sequence[dict[str, Any]], str | None]:
    """The conversation before this turn and the id that began it; nothing when this turn begins one."""
    if previous_id is None:
        return (), None
    entry = store.get(previous_id)
    if entry is None:
        if UNKNOWN_PREVIOUS_200 in faults:
            return (), None
        raise Rejected(f"Previous response with id '{previous_id}' not found.", "previous_response_id",
                       "previous_response_not_found", 404 if UNKNOWN_PREVIOUS_404 in faults else 400)
    if FORK_SHARES_STATE in faults:
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
        tools, choice = [tool for tool in tools if tool.get("name") == choice["name"]], "required"
    body: dict[str, Any] = {
        "messages": messages,
        "tools": [{"type": "function", "function": function} for function in chat_functions(tools)],
        "tool_choice": choice, "parallel_tool_calls": turn.parallel_tool_calls, "max_tokens": turn.max_output_tokens}
    if turn.text_format is not None:  # the chat model knows the same formats as `response_format`
        body["response_format"] = _as_response_format(turn.text_format)
    return body


def _as_response_format(text_format: dict[str, Any]) -> dict[str, Any]:
    if text_format.get("type") == "json_schema":
        return {"type": "json_schema", "json_schema": {"schema": text_format.get("schema")}}
    return {"type": text_format.get("type")}


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    return next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")


def _as_messages(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output as the next turn's model reads it; reasoning is not carried over."""
    messages = []
    for item in output:
        if item["type"] == "message":
            part = item["content"][0]
            messages.append({"role": "assistant", "content": part.get("text", part.get("refusal", ""))})
        elif (call := call_of(item)) is not None:
            messages.append(call)
    return messages


COUNT_PATH, COMPACT_PATH = f"{API.path}/input_tokens", f"{API.path}/compact"
ROUTES = {(API.method, API.path): create_response, ("POST", COUNT_PATH): count_input_tokens, ("POST", COMPACT_PATH): compact, ("GET", API.stored_path): get_response,
          ("DELETE", API.stored_path): delete_response, ("GET", f"{API.stored_path}/input_items"): list_input_items}
