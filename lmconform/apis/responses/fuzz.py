"""The generated requests of the Responses API (lmconform.fuzz): valid bodies, the violations that make one invalid,
the bodies that hold every feature a generated request may have, and a streamed request of the streams source."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from lmconform.fuzz.bodies import (
    BOOLEANS,
    CALL_COUNTS,
    FUNCTION_LISTS,
    FUNCTIONS,
    MOSTLY,
    SYSTEM_ROLES,
    TOOL_CHOICES,
    arguments,
    call_ids,
    content,
    one_of,
    texts,
    tool_names,
)
from lmconform.fuzz.violations import unknown_role


def offered(functions) -> list[dict]:
    """Functions as a Responses request offers them: flattened, `{"type": "function", "name": ...}`."""
    return [{"type": "function", **function} for function in functions]


@st.composite
def responses_bodies(draw) -> dict:
    """A valid Responses request: `input` as a string or as items, flattened tools, function_call_output turns."""
    offered_functions = draw(FUNCTION_LISTS) if draw(MOSTLY) else []
    body: dict[str, Any] = {}
    if draw(BOOLEANS):
        body["input"] = draw(texts)
    else:
        items: list[dict] = []
        if draw(BOOLEANS):
            role = draw(SYSTEM_ROLES)
            items.append({"role": role, "content": content(draw, draw(texts), "input_text")})
        items.append({"type": "message", "role": "user", "content": content(draw, draw(texts), "input_text")})
        if offered_functions and draw(BOOLEANS):  # the model's function calls, answered: the turn that gives results
            called = [one_of(draw, offered_functions) for _ in range(draw(CALL_COUNTS))]
            ids = call_ids(draw, len(called), "fc_")
            items += ({"type": "function_call", "call_id": call_id, "name": f["name"], "arguments": arguments(f)}
                      for call_id, f in zip(ids, called))
            items += ({"type": "function_call_output", "call_id": call_id, "output": draw(texts)} for call_id in ids)
        elif draw(BOOLEANS):
            items.append({"role": "assistant", "content": content(draw, draw(texts), "output_text")})
            items.append({"role": "user", "content": content(draw, draw(texts), "input_text")})
        body["input"] = items
    if draw(BOOLEANS):
        body["instructions"] = draw(texts)
    if draw(BOOLEANS):
        body["stream"] = True
    if offered_functions:
        body["tools"] = offered(offered_functions)
        choice = draw(TOOL_CHOICES)
        if choice == "named":
            body["tool_choice"] = {"type": "function", "name": one_of(draw, offered_functions)["name"]}
        elif choice != "absent":
            body["tool_choice"] = choice
        if draw(BOOLEANS):
            body["parallel_tool_calls"] = draw(BOOLEANS)
    return body


BODIES = responses_bodies()


# The violations of rules that span members, which no constraint of one member states (the schema's own constraints
# yield the rest: lmconform.fuzz.derived). What an input item or a tool holds depends on its `type`; there is
# something to answer only when input, a chain or a stored prompt gives it; a named tool_choice names an offered tool.

RESPONSES_ROLES = ("system", "developer", "user", "assistant")

UNKNOWN_RESPONSES_ROLES = unknown_role(RESPONSES_ROLES)


def _responses_tools(draw, body: dict) -> list[dict]:
    if not body.get("tools"):
        body["tools"] = [{"type": "function", **draw(FUNCTIONS)}]
    return body["tools"]


def input_missing(draw, body: dict) -> dict:
    """Nothing to answer: no input, and no chain or stored prompt instead."""
    del body["input"]
    return body


def input_empty(draw, body: dict) -> dict:
    body["input"] = []
    return body


def _items(draw, body: dict) -> list[dict]:
    if isinstance(body["input"], str):
        body["input"] = [{"role": "user", "content": body["input"]}]
    return body["input"]


def item_role_unknown(draw, body: dict) -> dict:
    """A message item's role: the roles are those of the item type `message`."""
    messages = [item for item in _items(draw, body) if item.get("type", "message") == "message"]
    draw(st.sampled_from(messages))["role"] = draw(UNKNOWN_RESPONSES_ROLES)
    return body


def item_type_unknown(draw, body: dict) -> dict:
    draw(st.sampled_from(_items(draw, body)))["type"] = draw(st.sampled_from(("text", "call", "tool_result", "")))
    return body


def call_output_without_call_id(draw, body: dict) -> dict:
    """A function_call_output item answers a call by its `call_id`."""
    _items(draw, body).append({"type": "function_call_output", "output": "42"})
    return body


def tool_name_missing(draw, body: dict) -> dict:
    """A tool of type `function` needs its name."""
    del draw(st.sampled_from(_responses_tools(draw, body)))["name"]
    return body


def nested_tool(draw, body: dict) -> dict:
    """The chat form of a tool, {"type": "function", "function": {...}}: the Responses API takes it flattened."""
    tools = _responses_tools(draw, body)
    position = draw(st.integers(0, len(tools) - 1))
    flat = tools[position]
    tools[position] = {"type": "function", "function": {key: value for key, value in flat.items() if key != "type"}}
    body.pop("tool_choice", None)
    return body


def tool_choice_not_offered(draw, body: dict) -> dict:
    """A named `tool_choice` must name one of `tools`."""
    offered = {tool["name"] for tool in _responses_tools(draw, body)}
    body["tool_choice"] = {"type": "function", "name": draw(tool_names.filter(lambda name: name not in offered))}
    return body


VIOLATIONS = (input_missing, input_empty, item_role_unknown, item_type_unknown, call_output_without_call_id,
              tool_name_missing, nested_tool, tool_choice_not_offered)


def expectation(body: dict) -> str:
    """What a valid request must get."""
    return "success"


def representatives(function: dict) -> list[dict]:
    """Bodies that hold every feature a generated request may have, offering `function`: for deciding which checks
    the generated requests can meet."""
    body = {"input": "What is the weather in Paris?", "tools": offered([function])}
    choices = ["none", "auto", "required", {"type": "function", "name": function["name"]}]
    call = {"type": "function_call", "call_id": "fc_1", "name": function["name"], "arguments": "{}"}
    return [*({**body, "stream": stream, "tool_choice": choice} for stream in (False, True) for choice in choices),
            {**body, "stream": True, "stream_options": {"include_usage": True}},
            {**body, "input": [{"role": "user", "content": "Weather?"}, call,
                               {"type": "function_call_output", "call_id": "fc_1", "output": "Sunny"}]}]


# A Responses stream has no usage chunk to ask for: its usage comes with the final response.
STREAM_USAGE = False


def stream_request(prompt: str, functions: tuple[dict, ...], usage: bool) -> dict:
    """A streamed request of the streams source: `prompt`, the functions offered (none: no tools)."""
    body: dict[str, Any] = {"input": prompt, "stream": True}
    if functions:
        body["tools"] = offered(functions)
    return body
