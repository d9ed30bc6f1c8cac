"""The generated requests of chat completions (lmconform.fuzz): valid bodies, the violations that make one invalid,
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
    TURNS,
    arguments,
    call_ids,
    content,
    one_of,
    texts,
    tool_names,
)
from lmconform.fuzz.violations import wrong_type


def offered(functions) -> list[dict]:
    """Functions as a chat request offers them: each wrapped as `{"type": "function", "function": ...}`."""
    return [{"type": "function", "function": function} for function in functions]


@st.composite
def chat_bodies(draw) -> dict:
    """A valid chat completion request (the run fills in its model, output cap and temperature)."""
    offered_functions = draw(FUNCTION_LISTS) if draw(MOSTLY) else []
    messages: list[dict] = []
    if draw(BOOLEANS):
        role = draw(SYSTEM_ROLES)
        messages.append({"role": role, "content": content(draw, draw(texts), "text")})
    for _ in range(draw(TURNS)):  # earlier exchanges of the conversation
        messages.append({"role": "user", "content": content(draw, draw(texts), "text")})
        if offered_functions and draw(BOOLEANS):
            called = [one_of(draw, offered_functions) for _ in range(draw(CALL_COUNTS))]
            ids = call_ids(draw, len(called), "call_")
            calls = [{"id": call_id, "type": "function", "function": {"name": f["name"], "arguments": arguments(f)}}
                     for call_id, f in zip(ids, called)]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            messages += ({"role": "tool", "tool_call_id": call_id, "content": content(draw, draw(texts), "text")}
                         for call_id in ids)
        else:
            messages.append({"role": "assistant", "content": content(draw, draw(texts), "text")})
    messages.append({"role": "user", "content": content(draw, draw(texts), "text")})
    body: dict[str, Any] = {"messages": messages}
    if draw(BOOLEANS):
        body["stream"] = True
        if draw(BOOLEANS):
            body["stream_options"] = {"include_usage": draw(BOOLEANS)}
    if offered_functions:
        body["tools"] = offered(offered_functions)
        choice = draw(TOOL_CHOICES)
        if choice == "named":
            body["tool_choice"] = {"type": "function", "function": {"name": one_of(draw, offered_functions)["name"]}}
        elif choice != "absent":
            body["tool_choice"] = choice
        if draw(BOOLEANS):
            body["parallel_tool_calls"] = draw(BOOLEANS)
    return body


BODIES = chat_bodies()


# The violations of rules that span members, which no constraint of one member states (the schema's own constraints
# yield the rest: lmconform.fuzz.derived). A message's content and a tool's function are rules of the branch its
# `role` or `type` picks; a tool result answers a call; a named tool_choice names an offered tool.


def _chat_tools(draw, body: dict) -> list[dict]:
    """The body's tools, one offered if it has none (for violations inside a tool)."""
    if not body.get("tools"):
        body["tools"] = [{"type": "function", "function": draw(FUNCTIONS)}]
    return body["tools"]


def tool_message_without_call_id(draw, body: dict) -> dict:
    """A tool result needs its `tool_call_id` because its role is `tool`."""
    body["messages"].append({"role": "tool", "content": "42"})
    return body


def tool_function_missing(draw, body: dict) -> dict:
    """A tool of type `function` needs its `function`."""
    del draw(st.sampled_from(_chat_tools(draw, body)))["function"]
    return body


def tool_name_missing(draw, body: dict) -> dict:
    del draw(st.sampled_from(_chat_tools(draw, body)))["function"]["name"]
    return body


def tool_parameters_not_an_object(draw, body: dict) -> dict:
    draw(st.sampled_from(_chat_tools(draw, body)))["function"]["parameters"] = wrong_type(draw, (dict,))
    return body


def tool_choice_not_offered(draw, body: dict) -> dict:
    """A named `tool_choice` must name one of `tools`."""
    offered = {tool["function"]["name"] for tool in _chat_tools(draw, body)}
    name = draw(tool_names.filter(lambda name: name not in offered))
    body["tool_choice"] = {"type": "function", "function": {"name": name}}
    return body


def content_wrong_type(draw, body: dict) -> dict:
    """What a message's content may be depends on its role."""
    draw(st.sampled_from(body["messages"]))["content"] = draw(st.sampled_from((7, 1.5, True, {"text": "hi"})))
    return body


VIOLATIONS = (tool_message_without_call_id, tool_function_missing, tool_name_missing, tool_parameters_not_an_object,
              tool_choice_not_offered, content_wrong_type)


def expectation(body: dict) -> str:
    """What a valid request must get. LM Studio refuses the object form of a chat `tool_choice` (a 4xx naming it);
    the check of that form judges both answers, so such a request expects either."""
    return "success_or_client_error" if isinstance(body.get("tool_choice"), dict) else "success"


def representatives(function: dict) -> list[dict]:
    """Bodies that hold every feature a generated request may have, offering `function`: for deciding which checks
    the generated requests can meet."""
    body = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}], "tools": offered([function])}
    choices = ["none", "auto", "required", {"type": "function", "function": {"name": function["name"]}}]
    return [*({**body, "stream": stream, "tool_choice": choice} for stream in (False, True) for choice in choices),
            {**body, "stream": True, "stream_options": {"include_usage": True}}]


# A streamed request may ask for the usage chunk: the streams source draws whether it does.
STREAM_USAGE = True


def stream_request(prompt: str, functions: tuple[dict, ...], usage: bool) -> dict:
    """A streamed request of the streams source: `prompt`, the functions offered (none: no tools), usage asked for."""
    body: dict[str, Any] = {"messages": [{"role": "user", "content": prompt}], "stream": True}
    if functions:
        body["tools"] = offered(functions)
    if usage:
        body["stream_options"] = {"include_usage": True}
    return body
