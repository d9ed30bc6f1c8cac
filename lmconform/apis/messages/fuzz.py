"""The generated requests of Anthropic Messages (lmconform.fuzz): valid bodies, the violations that make one invalid
and the bodies that hold every feature a generated request may have. The streams source has no Messages form (the
reference server's stream forms are those of chat completions and Responses), so this folder offers it nothing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from lmconform.fuzz.bodies import (
    BOOLEANS,
    CALL_COUNTS,
    FUNCTION_LISTS,
    FUNCTIONS,
    MOSTLY,
    TOOL_CHOICES,
    TURNS,
    arguments,
    call_ids,
    content,
    one_of,
    texts,
    tool_names,
)

# Anthropic requires an output cap on every request; a generated one keeps it as small as a real model's run would.
OUTPUT_CAPS = st.integers(1, 64)
# The Messages names of the tool choices the generator draws ("required" is Anthropic's "any").
CHOICE_TYPES = {"none": "none", "auto": "auto", "required": "any"}


def offered(functions) -> list[dict]:
    """Functions as a Messages request offers them: `{"name", "description", "input_schema"}`."""
    return [{"name": function["name"], **({"description": function["description"]} if "description" in function
                                          else {}),
             "input_schema": function.get("parameters", {"type": "object"})} for function in functions]


@st.composite
def messages_bodies(draw) -> dict:
    """A valid Messages request: a system prompt now and then, earlier turns (tool calls answered by tool results
    among them), the last turn the user's, tools and a tool choice."""
    offered_functions = draw(FUNCTION_LISTS) if draw(MOSTLY) else []
    messages: list[dict] = []
    for _ in range(draw(TURNS)):
        messages.append({"role": "user", "content": content(draw, draw(texts), "text")})
        if offered_functions and draw(BOOLEANS):  # the model's calls, answered in the next user turn
            called = [one_of(draw, offered_functions) for _ in range(draw(CALL_COUNTS))]
            ids = call_ids(draw, len(called), "toolu_")
            messages.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": call_id, "name": function["name"], "input": json.loads(arguments(function))}
                for call_id, function in zip(ids, called)]})
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": content(draw, draw(texts), "text")}
                for call_id in ids]})
        else:
            messages.append({"role": "assistant", "content": content(draw, draw(texts), "text")})
    if messages and messages[-1]["role"] == "user":  # a tool result ends the history: the new turn follows it
        messages.append({"role": "assistant", "content": content(draw, draw(texts), "text")})
    messages.append({"role": "user", "content": content(draw, draw(texts), "text")})
    body: dict[str, Any] = {"max_tokens": draw(OUTPUT_CAPS), "messages": messages}
    if draw(BOOLEANS):
        body["system"] = content(draw, draw(texts), "text")
    if draw(BOOLEANS):
        body["stream"] = True
    if offered_functions:
        body["tools"] = offered(offered_functions)
        choice = draw(TOOL_CHOICES)
        if choice == "named":
            body["tool_choice"] = {"type": "tool", "name": one_of(draw, offered_functions)["name"]}
        elif choice != "absent":
            body["tool_choice"] = {"type": CHOICE_TYPES[choice]}
        if body.get("tool_choice", {}).get("type") in ("auto", "any", "tool") and draw(BOOLEANS):
            body["tool_choice"]["disable_parallel_tool_use"] = draw(BOOLEANS)
    return body


BODIES = messages_bodies()


# The violations of rules that span members, which no constraint of one member states (the schema's own constraints
# yield the rest: lmconform.fuzz.derived). A tool result answers a call of the assistant turn before it, and only a
# user turn holds one; a tool choice of type `tool` names an offered tool.


def _messages_tools(draw, body: dict) -> list[dict]:
    """The body's tools, one offered if it has none (for violations that name a tool)."""
    if not body.get("tools"):
        body["tools"] = offered([draw(FUNCTIONS)])
    return body["tools"]


def tool_result_unanswered_call(draw, body: dict) -> dict:
    """A `tool_result` whose `tool_use_id` names no `tool_use` of the assistant turn before it."""
    body["messages"][-1:-1] = [{"role": "assistant", "content": "Done."},
                               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_unknown",
                                                             "content": "42"}]},
                               {"role": "assistant", "content": "Noted."}]
    return body


def tool_result_in_assistant_turn(draw, body: dict) -> dict:
    """A `tool_result` block in an assistant message: results come back in the user's turn."""
    body["messages"][-1:-1] = [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                                  "content": "42"}]}]
    return body


def tool_choice_not_offered(draw, body: dict) -> dict:
    """A tool choice of type `tool` must name one of `tools`."""
    names = {tool["name"] for tool in _messages_tools(draw, body)}
    body["tool_choice"] = {"type": "tool", "name": draw(tool_names.filter(lambda name: name not in names))}
    return body


VIOLATIONS = (tool_result_unanswered_call, tool_result_in_assistant_turn, tool_choice_not_offered)


def expectation(body: dict) -> str:
    """What a valid request must get."""
    return "success"


def representatives(function: dict) -> list[dict]:
    """Bodies that hold every feature a generated request may have, offering `function`: for deciding which checks
    the generated requests can meet."""
    body = {"max_tokens": 32, "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "tools": offered([function])}
    choices = [{"type": "none"}, {"type": "auto"}, {"type": "any"}, {"type": "tool", "name": function["name"]}]
    call = {"type": "tool_use", "id": "toolu_1", "name": function["name"], "input": {}}
    answered = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": [call]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}]},
                {"role": "assistant", "content": "It is sunny."}, {"role": "user", "content": "Thanks."}]
    return [*({**body, "stream": stream, "tool_choice": choice} for stream in (False, True) for choice in choices),
            {**body, "system": "Be brief.", "messages": answered}]
