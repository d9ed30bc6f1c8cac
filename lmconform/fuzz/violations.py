"""Invalid request bodies: a valid body (lmconform.fuzz.bodies) with exactly one violation, each of which every
server must refuse with a 4xx — a wrong JSON type, a missing required field, a value out of its enumeration, a
malformed tool, an empty `messages`, a tool result without its call's id, an unknown role, a `tool_choice` naming a
tool that is not offered, a chat-form (nested) tool sent to the Responses API.

A violation is a named function from a valid body to an invalid one; which one applied is kept with the example,
so a finding says what the server let through.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from hypothesis import strategies as st

from lmconform.fuzz.bodies import BODIES, FUNCTIONS, tool_names

Violation = Callable[..., dict]  # (draw, body) -> the body with one violation

CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
RESPONSES_ROLES = ("system", "developer", "user", "assistant")
# A value of each JSON type but the one a field takes.
WRONG_VALUES = (7, 1.5, True, "text", ["a list"], {"an": "object"})


def _unknown_role(known: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(("robot", "model", "User", "")),
                     st.text(max_size=12)).filter(lambda role: role not in known)


UNKNOWN_CHAT_ROLES = _unknown_role(CHAT_ROLES)
UNKNOWN_RESPONSES_ROLES = _unknown_role(RESPONSES_ROLES)


def _wrong_type(draw, accepted: tuple[type, ...]) -> object:
    wrong = [value for value in WRONG_VALUES if not isinstance(value, accepted)]
    return wrong[draw(st.integers(0, len(wrong) - 1))]


def _chat_tools(draw, body: dict) -> list[dict]:
    """The body's tools, one offered if it has none (for violations inside a tool)."""
    if not body.get("tools"):
        body["tools"] = [{"type": "function", "function": draw(FUNCTIONS)}]
    return body["tools"]


def _responses_tools(draw, body: dict) -> list[dict]:
    if not body.get("tools"):
        body["tools"] = [{"type": "function", **draw(FUNCTIONS)}]
    return body["tools"]


# --- chat completions ---------------------------------------------------------------------------------------------


def messages_missing(draw, body: dict) -> dict:
    del body["messages"]
    return body


def messages_empty(draw, body: dict) -> dict:
    body["messages"] = []
    return body


def messages_not_a_list(draw, body: dict) -> dict:
    body["messages"] = _wrong_type(draw, (list,))
    return body


def message_role_unknown(draw, body: dict) -> dict:
    message = draw(st.sampled_from(body["messages"]))
    message["role"] = draw(UNKNOWN_CHAT_ROLES)
    return body


def message_role_not_a_string(draw, body: dict) -> dict:
    draw(st.sampled_from(body["messages"]))["role"] = _wrong_type(draw, (str,))
    return body


def tool_message_without_call_id(draw, body: dict) -> dict:
    body["messages"].append({"role": "tool", "content": "42"})
    return body


def tools_not_a_list(draw, body: dict) -> dict:
    body["tools"] = _wrong_type(draw, (list,))
    body.pop("tool_choice", None)
    return body


def tool_type_unknown(draw, body: dict) -> dict:
    draw(st.sampled_from(_chat_tools(draw, body)))["type"] = draw(st.sampled_from(("func", "tool", "Function", "")))
    return body


def tool_function_missing(draw, body: dict) -> dict:
    del draw(st.sampled_from(_chat_tools(draw, body)))["function"]
    return body


def tool_name_missing(draw, body: dict) -> dict:
    del draw(st.sampled_from(_chat_tools(draw, body)))["function"]["name"]
    return body


def tool_parameters_not_an_object(draw, body: dict) -> dict:
    draw(st.sampled_from(_chat_tools(draw, body)))["function"]["parameters"] = _wrong_type(draw, (dict,))
    return body


def tool_choice_unknown_string(draw, body: dict) -> dict:
    _chat_tools(draw, body)
    body["tool_choice"] = draw(st.sampled_from(("any", "always", "None", "function", "")))
    return body


def tool_choice_not_offered(draw, body: dict) -> dict:
    offered = {tool["function"]["name"] for tool in _chat_tools(draw, body)}
    name = draw(tool_names.filter(lambda name: name not in offered))
    body["tool_choice"] = {"type": "function", "function": {"name": name}}
    return body


def stream_not_a_boolean(draw, body: dict) -> dict:
    body["stream"] = draw(st.sampled_from(("true", 1, "yes", ["true"])))
    body.pop("stream_options", None)
    return body


def content_wrong_type(draw, body: dict) -> dict:
    draw(st.sampled_from(body["messages"]))["content"] = draw(st.sampled_from((7, 1.5, True, {"text": "hi"})))
    return body


CHAT = (messages_missing, messages_empty, messages_not_a_list, message_role_unknown, message_role_not_a_string,
        tool_message_without_call_id, tools_not_a_list, tool_type_unknown, tool_function_missing, tool_name_missing,
        tool_parameters_not_an_object, tool_choice_unknown_string, tool_choice_not_offered, stream_not_a_boolean,
        content_wrong_type)


# --- Responses ----------------------------------------------------------------------------------------------------


def input_missing(draw, body: dict) -> dict:
    del body["input"]
    return body


def input_empty(draw, body: dict) -> dict:
    body["input"] = []
    return body


def input_wrong_type(draw, body: dict) -> dict:
    body["input"] = draw(st.sampled_from((7, 1.5, True, {"role": "user"})))
    return body


def _items(draw, body: dict) -> list[dict]:
    if isinstance(body["input"], str):
        body["input"] = [{"role": "user", "content": body["input"]}]
    return body["input"]


def item_role_unknown(draw, body: dict) -> dict:
    messages = [item for item in _items(draw, body) if item.get("type", "message") == "message"]
    draw(st.sampled_from(messages))["role"] = draw(UNKNOWN_RESPONSES_ROLES)
    return body


def item_type_unknown(draw, body: dict) -> dict:
    draw(st.sampled_from(_items(draw, body)))["type"] = draw(st.sampled_from(("text", "call", "tool_result", "")))
    return body


def call_output_without_call_id(draw, body: dict) -> dict:
    _items(draw, body).append({"type": "function_call_output", "output": "42"})
    return body


def responses_tools_not_a_list(draw, body: dict) -> dict:
    body["tools"] = _wrong_type(draw, (list,))
    body.pop("tool_choice", None)
    return body


def responses_tool_name_missing(draw, body: dict) -> dict:
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


def responses_tool_choice_unknown_string(draw, body: dict) -> dict:
    _responses_tools(draw, body)
    body["tool_choice"] = draw(st.sampled_from(("any", "always", "None", "function", "")))
    return body


def responses_tool_choice_not_offered(draw, body: dict) -> dict:
    offered = {tool["name"] for tool in _responses_tools(draw, body)}
    body["tool_choice"] = {"type": "function", "name": draw(tool_names.filter(lambda name: name not in offered))}
    return body


def responses_stream_not_a_boolean(draw, body: dict) -> dict:
    body["stream"] = draw(st.sampled_from(("true", 1, "yes", ["true"])))
    return body


def instructions_wrong_type(draw, body: dict) -> dict:
    body["instructions"] = _wrong_type(draw, (str,))
    return body


def effort_unknown(draw, body: dict) -> dict:
    body["reasoning"] = {"effort": draw(st.sampled_from(("extreme", "HIGH", "", "maximal")))}
    return body


RESPONSES = (input_missing, input_empty, input_wrong_type, item_role_unknown, item_type_unknown,
             call_output_without_call_id, responses_tools_not_a_list, responses_tool_name_missing, nested_tool,
             responses_tool_choice_unknown_string, responses_tool_choice_not_offered, responses_stream_not_a_boolean,
             instructions_wrong_type, effort_unknown)

VIOLATIONS: dict[str, tuple[Violation, ...]] = {"chat": CHAT, "responses": RESPONSES}


@st.composite
def invalid_bodies(draw, api: str, violation: Violation) -> tuple[str, dict]:
    """(the violation's name, a body of `api` with exactly that violation)."""
    return name_of(violation), violation(draw, copy.deepcopy(draw(BODIES[api])))


def name_of(violation: Violation) -> str:
    return violation.__name__.removeprefix("responses_").replace("_", " ")
