"""Faults of the Responses tool types beside `function` (namespaces, custom tools, hosted tools), as servers shipped
them to Codex in 2026: the tools dropped with a 200, a custom tool's call sent back as a function call, a namespace's
call sent back under the flattened name the server gave it. And LM Studio's refusal of every type but `function`,
a limit it states rather than a defect."""

from __future__ import annotations

import json
from typing import Any

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.registry import fault, flag

FUNCTION_TOOLS_ONLY = flag(
    "responses-function-tools-only", api="responses", variant=True,
    summary="every tool type but `function` and `mcp` is refused 400 \"Invalid discriminator value. Expected "
            "'function' | 'mcp'\" at `tools.<i>.type`, as LM Studio refuses Codex's tools",
    seen_in="LM Studio 0.4 (lmstudio-bug-tracker#1810, #1812); llama.cpp's llama-server (llama.cpp#20156)")


@fault("tool-types-dropped", stages.REQUEST, api="responses",
       summary="tools of any type but `function` are accepted with a 200 and dropped: the model never sees them and "
               "the echoed `tools` lacks them",
       seen_in="llama.cpp PR #23041, then openai/codex #36942 (an `apply_patch` call came back as prose)")
def tool_types_dropped(body: Any) -> Any:
    if isinstance(body, dict) and isinstance(body.get("tools"), list):
        return {**body, "tools": [tool for tool in body["tools"]
                                  if not isinstance(tool, dict) or tool.get("type") == "function"]}
    return body


@fault("custom-call-as-function-call", stages.OBJECT, api="responses",
       summary="a custom tool's call comes back as a `function_call` item whose `arguments` wrap the input "
               '(`{"input": …}`), not as a `custom_tool_call` with `input` (stream and non-stream)',
       seen_in="antirez/ds4 #745")
def custom_call_as_function_call(response: dict[str, Any]) -> dict[str, Any]:
    def as_function_call(item: dict[str, Any]) -> dict[str, Any]:
        if item["type"] != "custom_tool_call":
            return item
        return {"id": item["id"], "type": "function_call", "call_id": item["call_id"], "name": item["name"],
                "arguments": json.dumps({"input": item["input"]}), "status": item["status"]}

    return {**response, "output": [as_function_call(item) for item in response["output"]]}


@fault("namespace-flattened", stages.OBJECT, api="responses",
       summary="a namespace's function comes back as a `function_call` named `<namespace>__<name>`, the name the "
               "server flattened it to, without `namespace` (stream and non-stream)",
       seen_in="vllm #46737")
def namespace_flattened(response: dict[str, Any]) -> dict[str, Any]:
    def flattened(item: dict[str, Any]) -> dict[str, Any]:
        if item["type"] != "function_call" or "namespace" not in item:
            return item
        kept = {key: value for key, value in item.items() if key != "namespace"}
        return {**kept, "name": f"{item['namespace']}__{item['name']}"}

    return {**response, "output": [flattened(item) for item in response["output"]]}


GRAMMAR_INPUT_UNCONSTRAINED = flag(
    "grammar-input-unconstrained", api="responses",
    summary="a grammar tool's call carries input its grammar does not take: the model's text, not decoded within the "
            "grammar (stream and non-stream)",
    seen_in="servers that take a custom tool's `format` and generate its input without constrained decoding")
