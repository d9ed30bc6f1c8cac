"""The Responses tool types the chat model calls, as OpenAI sends their calls back: a namespace's function as a
`function_call` that names its `namespace`, a custom tool's call as a `custom_tool_call` with the free text of its
`input`. The chat model knows functions only: a namespace's functions are among them under a name that holds the
namespace (lmconform.apis.responses.reference.validation.chat_name), a custom tool is a function of one string, and
hosted tools (web search, MCP…), which OpenAI runs itself, are not among them."""

from __future__ import annotations

import json
from typing import Any

from lmconform.apis.responses.reference.validation import call_message, chat_name

# The one argument a custom tool is called with, for the chat model.
CUSTOM_INPUT = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}


def chat_functions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The functions of the chat form that stand for the request's tools."""
    functions = []
    for tool in tools:
        if tool["type"] == "function":
            functions.append({key: tool[key] for key in ("name", "description", "parameters") if key in tool})
        elif tool["type"] == "namespace":
            functions += ({key: function[key] for key in ("description", "parameters") if key in function}
                          | {"name": chat_name(tool["name"], function["name"])} for function in tool["tools"])
        elif tool["type"] == "custom":
            functions.append({"name": tool["name"], "description": tool.get("description") or "",
                              "parameters": CUSTOM_INPUT})
    return functions


def as_tool_items(output: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output with each call in the item type of the tool it calls."""
    namespaced = {chat_name(tool["name"], function["name"]): (tool["name"], function["name"])
                  for tool in tools if tool["type"] == "namespace" for function in tool["tools"]}
    custom = {tool["name"] for tool in tools if tool["type"] == "custom"}

    def of_its_type(item: dict[str, Any]) -> dict[str, Any]:
        if item["type"] != "function_call":
            return item
        if item["name"] in namespaced:
            namespace, name = namespaced[item["name"]]
            return {**item, "namespace": namespace, "name": name}
        if item["name"] in custom:
            given = json.loads(item["arguments"]).get("input", "")
            return {"id": item["id"].replace("fc_", "ctc_", 1), "type": "custom_tool_call", "call_id": item["call_id"],
                    "name": item["name"], "input": given if isinstance(given, str) else json.dumps(given),
                    "status": item["status"]}
        return item

    return [of_its_type(item) for item in output]


def call_of(item: dict[str, Any]) -> dict[str, Any] | None:
    """The chat message of a call the output made, for the next turn's model; None for an item that is no call."""
    if item["type"] == "function_call":
        return call_message(item["call_id"], chat_name(item.get("namespace"), item["name"]), item["arguments"])
    if item["type"] == "custom_tool_call":
        return call_message(item["call_id"], item["name"], json.dumps({"input": item["input"]}))
    return None
