"""The chat faults only generated requests find: each hides behind a form of request no written or recorded case
sends (an unknown role, parameters nested two objects deep, a tool name over 40 characters, a character outside the
Basic Multilingual Plane). Each is a flag the door asks about: one drops a rule of validation, three answer a valid
request with a 500 after validation, as a server that crashes while preparing the prompt does.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from lmconform.reference.faults.registry import flag

LONG_NAME = 40  # characters of a tool name past which the long-tool-name-500 fault crashes

UNKNOWN_ROLE_ACCEPTED = flag(
    "unknown-role-accepted", api="chat", summary="a chat message with a role outside the known five is answered 200",
    seen_in="vLLM and llama.cpp before role validation: a typo'd role silently dropped from the prompt", generated_only=True)
DEEP_PARAMETERS_500 = flag(
    "deep-parameters-500", api="chat",
    summary="a tool whose parameters nest an object two levels deep gets HTTP 500",
    seen_in="grammar-from-schema converters that recurse one level only (llama.cpp json-schema-to-grammar issues)", generated_only=True)
LONG_TOOL_NAME_500 = flag(
    "long-tool-name-500", api="chat", summary=f"a tool name over {LONG_NAME} characters gets HTTP 500",
    seen_in="chat templates and grammars that cut tool names to a fixed buffer", generated_only=True)
ASTRAL_TEXT_500 = flag(
    "astral-text-500", api="chat",
    summary="message text with a character outside the Basic Multilingual Plane (an emoji) gets HTTP 500",
    seen_in="UTF-16 surrogate handling in tokenizer bindings (emoji split into lone surrogates)", generated_only=True)



def object_depth(schema: Any) -> int:
    """How many objects are nested below `schema` (an object schema with only leaves below it: 0)."""
    if not isinstance(schema, dict):
        return 0
    children = [*(schema.get("properties") or {}).values()] if isinstance(schema.get("properties"), dict) else []
    if isinstance(schema.get("items"), dict):
        children.append(schema["items"])
    depths = [object_depth(child) + (child.get("type") == "object") for child in children if isinstance(child, dict)]
    return max(depths, default=0)


def _texts(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def crash(body: dict[str, Any], faults: frozenset[str]) -> Response | None:
    """The 500 answer one of the crashing faults gives a valid chat request, or None."""
    functions = [tool.get("function") or {} for tool in body.get("tools") or []]
    crashed = (
        (DEEP_PARAMETERS_500 in faults and any(object_depth(f.get("parameters")) >= 2 for f in functions))
        or (LONG_TOOL_NAME_500 in faults and any(len(f.get("name", "")) > LONG_NAME for f in functions))
        or (ASTRAL_TEXT_500 in faults and any(ord(c) > 0xFFFF for m in body["messages"] for text in _texts(m.get("content"))
                                              for c in text))
    )
    return JSONResponse({"error": "Internal server error"}, status_code=500) if crashed else None
