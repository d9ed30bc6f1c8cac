"""`POST /api/v1/chat`, LM Studio's own chat API (0.4.0+), as its REST docs describe it (the chat and
streaming-events pages of lmstudio-ai/docs): an `input` (a string, or text and image items), a `system_prompt`,
`integrations` whose tools the server runs itself, `reasoning`, and stored chats continued by
`previous_response_id`; answered with a result (`model_instance_id`, `output` items, `stats`, `response_id`) or
its event stream (lmconform.apis.native_chat.reference.render).

The reference server has one plugin of its own, `mcp/lmconform`, with a `get_time` tool that answers "12:00"; a
request that names any other integration is refused, since the server connects to nothing. Everything else is
read by the chat model of lmconform.reference.model, as the other endpoints are.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.apis.native_chat import API
from lmconform.apis.native_chat.reference import stages
from lmconform.apis.native_chat.reference.faults import CHAIN_IGNORED
from lmconform.apis.native_chat.reference.render import frame, new_response_id, result_object, stream_events
from lmconform.reference.faults.registry import apply
from lmconform.reference.model import decide, recall, usage
from lmconform.reference.overflow import lmstudio_words, overflow_answered, overflow_cut, overflow_refusal
from lmconform.reference.refusal import refusal_message, schema_refusal
from lmconform.reference.store import ResponseStore, store_of
from lmconform.reference.wire import SSE_HEADERS, reject_json_constant

PLUGIN = "mcp/lmconform"
PLUGIN_TOOLS = {
    "get_time": {"name": "get_time", "description": "Get the current time in a timezone",
                 "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}},
                                "required": ["timezone"]}},
}
TOOL_OUTPUT = "12:00"
REASONING = ("off", "low", "medium", "high", "on")


class Refused(Exception):
    def __init__(self, message: str, param: str | None = None, code: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.error = {"type": "invalid_request", "message": message,
                      **({"code": code} if code else {}), **({"param": param} if param else {})}
        self.status = status

    def response(self) -> JSONResponse:
        return JSONResponse({"error": self.error}, status_code=self.status)


async def native_chat(request: Request, faults: frozenset[str]) -> Response:
    store = store_of(request, API.name)
    try:
        body = apply(stages.REQUEST, faults, _json(await request.body()))
        _validate(body)
        broken = schema_refusal(API.name, body, faults)
        if broken is not None:
            raise Refused(refusal_message(broken), broken.pointer.lstrip("/").replace("/", ".") or None)
        tools = _tools(body.get("integrations") or [])
        earlier = _history(store, body.get("previous_response_id"))
    except Refused as refused:
        return refused.response()
    user = {"role": "user", "content": _input_text(body["input"])}
    conversation = [user] if CHAIN_IGNORED in faults else [*earlier, user]
    system = [{"role": "system", "content": body["system_prompt"]}] if body.get("system_prompt") else []
    chat_body: dict[str, Any] = {"messages": [*system, *conversation], "tools": tools, "tool_choice": "auto"}
    overflow = overflow_refusal(chat_body["messages"], body.get("stream") is True, faults,
                                lambda words: Refused(lmstudio_words(words), "input").response())
    if overflow is not None:
        return overflow
    plan = overflow_answered(recall(chat_body["messages"]) or decide(chat_body), chat_body["messages"], faults)
    output: list[dict[str, Any]] = []
    if body.get("reasoning") not in (None, "off"):
        output.append({"type": "reasoning", "content": f"Thinking about: {user['content']}"})
    for call in plan.tool_calls:
        output.append({"type": "tool_call", "tool": call.name, "arguments": call.arguments, "output": TOOL_OUTPUT,
                       "provider_info": {"type": "plugin", "plugin_id": PLUGIN}})
    if plan.tool_calls:  # the server ran the tools; the model answers with what they returned
        calls = [{"id": call.id, "type": "function", "function": {"name": call.name, "arguments": "{}"}}
                 for call in plan.tool_calls]
        results = [{"role": "tool", "tool_call_id": call.id, "content": TOOL_OUTPUT} for call in plan.tool_calls]
        plan = decide({"messages": [*chat_body["messages"], {"role": "assistant", "content": "",
                                                             "tool_calls": calls}, *results]})
    output.append({"type": "message", "content": plan.text})
    response_id = new_response_id() if body.get("store", True) else None
    counts = usage(chat_body, plan)
    result = apply(stages.RESULT, faults, result_object(body["model"], output, counts, response_id))
    if response_id is not None:
        history = [*conversation, {"role": "assistant", "content": plan.text}]
        store.add(response_id, json.dumps(result).encode(), history, response_id)
    if body.get("stream") is not True:
        return JSONResponse(result)
    events = apply(stages.EVENTS, faults, stream_events(result))
    frames = apply(stages.FRAMES, faults, overflow_cut([(event["type"], event) for event in events],
                                                       chat_body["messages"], faults))
    return StreamingResponse(iter([frame(name, data) for name, data in frames]), headers=SSE_HEADERS)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw, parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        raise Refused("Request body is not valid JSON") from None


def _validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise Refused("Request body must be a JSON object")
    for name in ("model", "input"):
        if name not in body:
            raise Refused(f'"{name}" is required', name, "missing_required_parameter")
    if not isinstance(body["model"], str) or not body["model"]:
        raise Refused('"model" must be a non-empty string', "model")
    given = body["input"]
    items = given if isinstance(given, list) else None
    if not isinstance(given, str) and not (items and all(_valid_item(item) for item in items)):
        raise Refused('"input" must be a string or a list of text and image items', "input")
    if body.get("reasoning") is not None and body["reasoning"] not in REASONING:
        raise Refused(f'"reasoning" must be one of {", ".join(REASONING)}', "reasoning")
    for name in ("stream", "store"):
        if name in body and not isinstance(body[name], bool):
            raise Refused(f'"{name}" must be a boolean', name)
    if not isinstance(body.get("integrations", []), list):
        raise Refused('"integrations" must be a list', "integrations")


def _valid_item(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if item.get("type") in ("text", "message"):  # the docs name it both ways
        return isinstance(item.get("content"), str)
    return item.get("type") == "image" and isinstance(item.get("data_url"), str)


def _input_text(given: Any) -> str:
    if isinstance(given, str):
        return given
    return " ".join(item["content"] for item in given if item.get("type") in ("text", "message"))


def _tools(integrations: list[Any]) -> list[dict[str, Any]]:
    """The chat tools of the integrations asked for; an integration the server does not have is refused."""
    tools: dict[str, dict[str, Any]] = {}
    for integration in integrations:
        plugin = integration if isinstance(integration, str) else None
        allowed = None
        if isinstance(integration, dict) and integration.get("type") == "plugin":
            plugin, allowed = integration.get("id"), integration.get("allowed_tools")
        if plugin != PLUGIN:
            shown = json.dumps(integration, ensure_ascii=False)[:200]
            raise Refused(f"Integration {shown} is not available: the reference server has only the plugin {PLUGIN}",
                          "integrations", "plugin_connection_error")
        for name, tool in PLUGIN_TOOLS.items():
            if allowed is None or (isinstance(allowed, list) and name in allowed):
                tools[name] = {"type": "function", "function": tool}
    return list(tools.values())


def _history(store: ResponseStore, previous_id: Any) -> list[dict[str, Any]]:
    if previous_id is None:
        return []
    entry = store.get(previous_id) if isinstance(previous_id, str) else None
    if entry is None:
        raise Refused(f"Response with id '{previous_id}' not found", "previous_response_id", "response_not_found")
    return list(entry.history)


ROUTES = {(API.method, API.path): native_chat}
