"""Which cases the Responses checks judge, decided from the case alone."""

from __future__ import annotations

import re

from lmconform.cases import Case


def _nested(tool) -> bool:
    return isinstance(tool, dict) and "function" in tool and "name" not in tool


def responses_answer(case: Case) -> bool:
    return case.api == "responses" and not case.invalid


def responses_streamed(case: Case) -> bool:
    return responses_answer(case) and case.streamed


def responses_body(case: Case) -> bool:
    return responses_answer(case) and not case.streamed


def _answers_a_call(case: Case) -> bool:
    """The input ends with a function_call_output: the model is to use the result, not to call again."""
    items = case.body.get("input") if isinstance(case.body, dict) else None
    return isinstance(items, list) and bool(items) and isinstance(items[-1], dict) \
        and items[-1].get("type") == "function_call_output"


def _name_words(name) -> set[str]:
    """The words of a tool name a request would use to ask for it: `get_weather`, `getWeather` → weather (and get,
    but words under four letters are too common to count as asking)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name) if isinstance(name, str) else ""
    return {word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if len(word) >= 4}


def _input_text(case: Case) -> str:
    """What the input says: its text, not the names of its fields or their enumerations (a role `user` asks for no
    tool named `User`)."""
    given = case.body.get("input") if isinstance(case.body, dict) else None
    return " ".join(_said(given))


def _said(value, key: str = "content") -> list[str]:
    if isinstance(value, str):
        return [value] if key in ("content", "text", "output") else []
    if isinstance(value, list):
        return [text for item in value for text in _said(item, key)]
    if isinstance(value, dict):
        return [text for name, item in value.items() for text in _said(item, name)]
    return []


def asks_for_a_tool(case: Case) -> bool:
    """A call is due: `tool_choice` forces one, or the input asks for a tool by a word of its name."""
    choice = case.tool_choice
    if choice == "required" or isinstance(choice, dict):
        return True
    said = set(re.findall(r"[a-z0-9]+", _input_text(case).lower()))
    return choice != "none" and any(_name_words(tool.get("name")) & said for tool in case.tools
                                    if isinstance(tool, dict))


def responses_flattened_tools(case: Case) -> bool:
    return (responses_answer(case) and case.valid and bool(case.tools) and not any(map(_nested, case.tools))
            and not _answers_a_call(case) and asks_for_a_tool(case))


def responses_nested_tools(case: Case) -> bool:
    return responses_answer(case) and bool(case.tools) and any(map(_nested, case.tools))


def _continuing(case: Case) -> list:
    """Turns that continue an earlier answer with new input (not those that answer a function call)."""
    return [turn for turn in case.turns if turn.previous and not turn.answers_call_of]


def responses_chain(case: Case) -> bool:
    return responses_answer(case) and case.valid and bool(_continuing(case))


def responses_recall(case: Case) -> bool:
    return responses_chain(case) and any(turn.recall for turn in case.turns)


def responses_function_call_output(case: Case) -> bool:
    return responses_answer(case) and any(turn.answers_call_of for turn in case.turns)


def responses_unknown_previous(case: Case) -> bool:
    """The case's request names a previous_response_id that was never issued, or one of its turns does."""
    return case.api == "responses" and ((case.invalid and case.previous_response_id is not None)
                                        or any(turn.unknown_previous_id for turn in case.turns))


def responses_tool_choice_required(case: Case) -> bool:
    return responses_answer(case) and bool(case.tools) and case.tool_choice == "required"
