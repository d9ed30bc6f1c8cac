"""What `POST /v1/messages` accepts, as Anthropic's API reference describes it, and the conversation it carries as
the chat model reads it.

A request that breaks a rule is refused with HTTP 400 and Anthropic's error body, `{"type": "error", "error":
{"type": "invalid_request_error", "message"}}`; the messages name the offending field by its path, as Anthropic's
own do (`tools.0.name: …`). The rules are the ones a client can break by mistake: a missing required field, a tool
name outside `^[a-zA-Z0-9_-]{1,128}$`, an unknown `tool_choice`, a `tool_result` that answers no `tool_use` of the
assistant turn before it.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from lmconform.reference.model import arguments_json, content_text
from lmconform.reference.wire import reject_json_constant

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_CHOICES = ("auto", "any", "tool", "none")
THINKING = ("enabled", "disabled", "adaptive")
# A system turn among the messages is what Claude Code sends in the middle of a conversation; LM Studio accepts it
# since 0.4.15 ("/v1/messages API now supports system messages in the messages array").
ROLES = ("user", "assistant", "system")
TURN_ROLES = ("user", "assistant")  # what a server that refuses a system turn accepts
# Anthropic's error type for each status the reference server answers with.
ERROR_TYPES = {400: "invalid_request_error", 404: "not_found_error", 500: "api_error"}


class Refused(Exception):
    """A request the server refuses, with the status and Anthropic's error type it is refused with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def response(self) -> JSONResponse:
        return error_response(self.message, self.status)


def error_response(message: str, status: int) -> JSONResponse:
    error = {"type": ERROR_TYPES.get(status, "api_error"), "message": message}
    return JSONResponse({"type": "error", "error": error, "request_id": f"req_{secrets.token_hex(12)}"},
                        status_code=status)


async def json_body(request: Request) -> Any:
    try:
        return json.loads(await request.body(), parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        raise Refused("The request body is not valid JSON.") from None


def validate(body: Any, roles: tuple[str, ...] = ROLES) -> None:
    """Raise Refused naming the first rule `body` breaks; `roles` are those a message may have."""
    if not isinstance(body, dict):
        raise Refused("The request body must be a JSON object.")
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            raise Refused(f"{name}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise Refused("model: Input should be a non-empty string")
    if isinstance(body["max_tokens"], bool) or not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        raise Refused("max_tokens: Input should be an integer greater than or equal to 1")
    _validate_system(body.get("system"))
    _validate_messages(body["messages"], roles)
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        raise Refused("tools: Input should be a valid list")
    for position, tool in enumerate(tools):
        _validate_tool(position, tool)
    _validate_tool_choice(body.get("tool_choice"), [tool["name"] for tool in tools])
    _validate_thinking(body.get("thinking"), body["max_tokens"])
    stops = body.get("stop_sequences", [])
    if not isinstance(stops, list) or not all(isinstance(stop, str) for stop in stops):
        raise Refused("stop_sequences: Input should be a list of strings")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise Refused("stream: Input should be a valid boolean")


def _validate_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list) or not all(_is_text_block(block) for block in system):
        raise Refused("system: Input should be a string or a list of text blocks")


def _is_text_block(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)


def _validate_messages(messages: Any, roles: tuple[str, ...]) -> None:
    if not isinstance(messages, list) or not messages:
        raise Refused("messages: Input should be a non-empty list")
    for position, message in enumerate(messages):
        where = f"messages.{position}"
        if not isinstance(message, dict) or message.get("role") not in roles:
            named = [f"'{role}'" for role in roles]
            raise Refused(f"{where}.role: Input should be {', '.join(named[:-1])} or {named[-1]}")
        content = message.get("content")
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            raise Refused(f"{where}.content: Input should be a string or a list of content blocks")
        for index, block in enumerate(content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise Refused(f"{where}.content.{index}: Input should be a content block with a type")
            if block["type"] == "tool_use" and not (isinstance(block.get("id"), str) and isinstance(
                    block.get("name"), str) and isinstance(block.get("input"), dict)):
                raise Refused(f"{where}.content.{index}: a tool_use block needs id, name and an input object")
            if block["type"] == "tool_result":
                _validate_tool_result(messages, position, index, block)


def _validate_tool_result(messages: list, position: int, index: int, block: dict) -> None:
    """A tool_result answers a tool_use of the assistant turn right before its own (Anthropic's rule)."""
    where = f"messages.{position}.content.{index}"
    if messages[position].get("role") != "user":
        raise Refused(f"{where}: tool_result blocks are only allowed in user messages")
    previous = messages[position - 1] if position else {}
    content = previous.get("content") if isinstance(previous, dict) and previous.get("role") == "assistant" else []
    called = {b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"} \
        if isinstance(content, list) else set()
    if block.get("tool_use_id") not in called:
        raise Refused(f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                      f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                      f"block in the previous message.")


def _validate_tool(position: int, tool: Any) -> None:
    where = f"tools.{position}"
    if not isinstance(tool, dict):
        raise Refused(f"{where}: Input should be an object")
    if tool.get("type", "custom") != "custom":
        raise Refused(f"{where}.type: the reference server has no server tool {tool.get('type')!r}")
    if not isinstance(tool.get("name"), str) or not TOOL_NAME.match(tool["name"]):
        raise Refused(f"{where}.name: String should match pattern '{TOOL_NAME.pattern}'")
    if not isinstance(tool.get("input_schema"), dict):
        raise Refused(f"{where}.input_schema: Field required")


def _validate_tool_choice(choice: Any, names: list[str]) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICES:
        raise Refused("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if choice["type"] == "tool" and choice.get("name") not in names:
        raise Refused(f"tool_choice.name: no tool named {choice.get('name')!r} in tools")
    if not isinstance(choice.get("disable_parallel_tool_use", False), bool):
        raise Refused("tool_choice.disable_parallel_tool_use: Input should be a valid boolean")


def _validate_thinking(thinking: Any, max_tokens: int) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in THINKING:
        raise Refused("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
    budget = thinking.get("budget_tokens")
    if thinking["type"] == "enabled" and (not isinstance(budget, int) or not 1024 <= budget < max_tokens):
        raise Refused("thinking.budget_tokens: Input should be at least 1024 and less than max_tokens")


@dataclass(frozen=True)
class Conversation:
    """A valid request as the chat model reads it, and what else the answer depends on."""

    chat_body: dict[str, Any]
    thinking: bool
    stop_sequences: tuple[str, ...]
    has_tool_results: bool


THINKING_ON = ("enabled", "adaptive")  # the thinking types that bring a thinking block


def conversation(body: dict[str, Any], adaptive: bool = True) -> Conversation:
    """The request in the chat model's words: the system prompt, each turn's text, tool_use blocks as tool calls
    and tool_result blocks as tool messages; the tools as functions, `any` as required, a named tool as the only
    tool (required), and `disable_parallel_tool_use` as no parallel calls. Thinking is on when the request enables
    it, or asks for it adaptive (unless `adaptive` is false: a server that knows `enabled` only)."""
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": content_text(system)})
    has_results = False
    for message in body["messages"]:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [block["text"] for block in blocks if block["type"] == "text" and isinstance(block.get("text"), str)]
        if message["role"] == "system":
            messages.append({"role": "system", "content": " ".join(texts)})
            continue
        if message["role"] == "assistant":
            calls = [{"id": block["id"], "type": "function",
                      "function": {"name": block["name"], "arguments": arguments_json(block["input"])}}
                     for block in blocks if block["type"] == "tool_use"]
            messages.append({"role": "assistant", "content": " ".join(texts), **({"tool_calls": calls} if calls else {})})
            continue
        for block in blocks:
            if block["type"] == "tool_result":
                has_results = True
                messages.append({"role": "tool", "tool_call_id": block["tool_use_id"],
                                 "content": content_text(block.get("content", ""))})
        if texts or not any(block["type"] == "tool_result" for block in blocks):
            messages.append({"role": "user", "content": " ".join(texts)})
    tools: list[dict[str, Any]] = [{"type": "function", "function": {"name": tool["name"], "description": tool.get("description", ""),
                                                "parameters": tool["input_schema"]}} for tool in body.get("tools", [])]
    choice = body.get("tool_choice") or {"type": "auto"}
    chat_choice = {"auto": "auto", "any": "required", "tool": "required", "none": "none"}[choice["type"]]
    if choice["type"] == "tool":
        tools = [tool for tool in tools if tool["function"]["name"] == choice["name"]]
    chat_body = {"messages": messages, "tools": tools, "tool_choice": chat_choice, "max_tokens": body.get("max_tokens"),
                 "parallel_tool_calls": not choice.get("disable_parallel_tool_use", False)}
    thinking = isinstance(body.get("thinking"), dict) and body["thinking"]["type"] in THINKING_ON[:1 + adaptive]
    return Conversation(chat_body, thinking, tuple(body.get("stop_sequences", [])), has_results)
