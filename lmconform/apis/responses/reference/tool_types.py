"""The Responses tool types the chat model calls, as OpenAI sends their calls back: a namespace's function as a
`function_call` that names its `namespace`, a custom tool's call as a `custom_tool_call` with the free text of its
`input`. The chat model knows functions only: a namespace's functions are among them under a name that holds the
namespace (lmconform.apis.responses.reference.validation.chat_name), a custom tool is a function of one string, and
hosted tools (web search, MCP…), which OpenAI runs itself, are not among them."""

from __future__ import annotations

import json
from typing import Any

from lmconform.apis.responses.reference.validation import call_message, chat_name
from lmconform.schemas.grammar import in_grammar

# The one argument a custom tool is called with, for the chat model.
CUSTOM_INPUT = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
# A grammar tool's input where the grammar does not take the model's text: the text as the patch that adds it to a
# file, in Codex's apply_patch envelope (the grammar tools Codex sends are patch grammars).
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+{text}\n*** End Patch"


def within_grammar(tool: dict[str, Any], text: str) -> str:
    """What the model writes for a custom tool: its text, or for a grammar tool whose grammar does not take that, the
    text as a patch, as OpenAI's constrained decoding keeps a model inside the grammar."""
    form = tool.get("format")
    form = form if isinstance(form, dict) else {}
    if form.get("type") != "grammar" or in_grammar(form.get("syntax"), form.get("definition"), text).matches is not False:
        return text
    return PATCH.format(text=text)


def chat_functions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The functions of the chat form that stand for the request's tools."""
    functions: list[dict[str, Any]] = []
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


def as_tool_items(output: list[dict[str, Any]], tools: list[dict[str, Any]], constrained: bool = True) \
        -> list[dict[str, Any]]:
    """The output with each call in the item type of the tool it calls; a grammar tool's input within its grammar
    unless the decoding is not `constrained` to it."""
    namespaced = {chat_name(tool["name"], function["name"]): (tool["name"], function["name"])
                  for tool in tools if tool["type"] == "namespace" for function in tool["tools"]}
    custom = {tool["name"]: tool for tool in tools if tool["type"] == "custom"}

    def of_its_type(item: dict[str, Any]) -> dict[str, Any]:
        if item["type"] != "function_call":
            return item
        if item["name"] in namespaced:
            namespace, name = namespaced[item["name"]]
            return {**item, "namespace": namespace, "name": name}
        if item["name"] in custom:
            given = json.loads(item["arguments"]).get("input", "")
            text = given if isinstance(given, str) else json.dumps(given)
            return {"id": item["id"].replace("fc_", "ctc_", 1), "type": "custom_tool_call", "call_id": item["call_id"],
                    "name": item["name"], "input": within_grammar(custom[item["name"]], text) if constrained else text,
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
