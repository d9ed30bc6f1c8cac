"""The params of each method the bridge serves, checked and turned into values the bridge works with.

A shape error raises InvalidParams, which the dispatcher answers with `-32602`: params of the wrong shape are the
client's mistake and must never end the process (Symposium's bridge looks likely to die on them). Fields the
protocol does not name are ignored, as serde does for the source's types. Content parts are kept as plain JSON
objects holding only their protocol keys, so that history comparison is plain equality.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PROVIDE_RESPONSE = "lm/provideLanguageModelChatResponse"
PROVIDE_INFORMATION = "lm/provideLanguageModelChatInformation"
PROVIDE_TOKEN_COUNT = "lm/provideTokenCount"
CANCEL = "lm/cancel"

ROLES = ("user", "assistant")
TOOL_MODES = ("auto", "required")
AGENT_KINDS = ("eliza", "mcp_server")  # Symposium's AgentDefinition variants
_PART_FIELDS = {  # each part type's keys besides `type`, and whether the key's value must be a string
    "text": {"value": True},
    "tool_call": {"toolCallId": True, "toolName": True, "parameters": False},
    "tool_result": {"toolCallId": True, "result": False},
}


class InvalidParams(ValueError):
    pass


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ChatRequest:
    model_id: str
    messages: tuple[dict[str, Any], ...]  # {"role", "content": [part, ...]}, adjacent text parts merged
    agent: dict[str, Any]
    tools: tuple[Tool, ...]
    tool_mode: str


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParams(f"{where} must be an object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidParams(f"{where} must be an array")
    return value


def _string(container: dict[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    if not isinstance(value, str):
        raise InvalidParams(f"{where}.{key} must be a string")
    return value


def _one_of(value: Any, choices: Any, where: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InvalidParams(f"{where} must be one of {', '.join(choices)}, not {json.dumps(value)}")
    return value


def content_part(value: Any, where: str) -> dict[str, Any]:
    part = _object(value, where)
    kind = _one_of(part.get("type"), _PART_FIELDS, f"{where}.type")
    checked: dict[str, Any] = {"type": kind}
    for key, is_string in _PART_FIELDS[kind].items():
        if key not in part:
            raise InvalidParams(f"{where}.{key} is required for a {kind} part")
        checked[key] = _string(part, key, where) if is_string else part[key]
    return checked


def merge_text(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent text parts as one: a client may re-split text freely, and history must still match."""
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "text" and merged and merged[-1]["type"] == "text":
            merged[-1] = {"type": "text", "value": merged[-1]["value"] + part["value"]}
        else:
            merged.append(part)
    return merged


def message(value: Any, where: str) -> dict[str, Any]:
    checked = _object(value, where)
    role = _one_of(checked.get("role"), ROLES, f"{where}.role")
    content = _list(checked.get("content"), f"{where}.content")
    parts = [content_part(part, f"{where}.content[{i}]") for i, part in enumerate(content)]
    return {"role": role, "content": merge_text(parts)}


def _agent(value: Any) -> dict[str, Any]:
    """Symposium's AgentDefinition, an externally tagged enum: `{"eliza": {...}}` or `{"mcp_server": {...}}`.
    Only its shape is checked; this bridge answers with the agent chosen on its command line, and uses the
    definition to keep sessions of different agents apart, as the source does."""
    agent = _object(value, "params.agent")
    if len(agent) != 1 or next(iter(agent)) not in AGENT_KINDS:
        raise InvalidParams(f"params.agent must have exactly one key, one of {', '.join(AGENT_KINDS)}")
    _object(next(iter(agent.values())), f"params.agent.{next(iter(agent))}")
    return agent


def _tool(value: Any, where: str) -> Tool:
    tool = _object(value, where)
    description = tool.get("description", "")
    if not isinstance(description, str):
        raise InvalidParams(f"{where}.description must be a string")
    schema = tool.get("inputSchema")
    if schema is None:  # VS Code's inputSchema is optional: a tool without one takes no arguments
        schema = {"type": "object", "properties": {}}
    return Tool(_string(tool, "name", where), description, _object(schema, f"{where}.inputSchema"))


def _or(value: Any, default: Any) -> Any:
    """An optional field: absent and null both mean the default (serde's `#[serde(default)]` with Option)."""
    return default if value is None else value


def chat_request(params: Any) -> ChatRequest:
    checked = _object(params, "params")
    messages = _list(checked.get("messages"), "params.messages")
    options = _object(_or(checked.get("options"), {}), "params.options")
    tools = _list(_or(options.get("tools"), []), "params.options.tools")
    tool_mode = _one_of(_or(options.get("toolMode"), "auto"), TOOL_MODES, "params.options.toolMode")
    return ChatRequest(
        model_id=_string(checked, "modelId", "params"),
        messages=tuple(message(item, f"params.messages[{i}]") for i, item in enumerate(messages)),
        agent=_agent(checked.get("agent")),
        tools=tuple(_tool(tool, f"params.options.tools[{i}]") for i, tool in enumerate(tools)),
        tool_mode=tool_mode,
    )


def information_request(params: Any) -> bool:
    """Whether the client asked for silence (no user interaction); params may be left out."""
    checked = _object(_or(params, {}), "params")
    silent = checked.get("silent", False)
    if not isinstance(silent, bool):
        raise InvalidParams("params.silent must be a boolean")
    return silent


def token_count_request(params: Any) -> str:
    """The text to count."""
    checked = _object(params, "params")
    _string(checked, "modelId", "params")
    return _string(checked, "text", "params")


def cancel_request(params: Any) -> Any:
    """The id of the request to cancel, as sent."""
    checked = _object(params, "params")
    if "requestId" not in checked:
        raise InvalidParams("params.requestId is required")
    return checked["requestId"]
