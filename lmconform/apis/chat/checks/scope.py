"""Which cases the chat completions checks judge, decided from the case alone."""

from __future__ import annotations

from lmconform.cases import Case
from lmconform.checks.scope import format_type


def chat_answer(case: Case) -> bool:
    return case.api == "chat" and not case.invalid


def chat_body(case: Case) -> bool:
    return chat_answer(case) and not case.streamed


def chat_streamed(case: Case) -> bool:
    return chat_answer(case) and case.streamed


def chat_streamed_with_tools(case: Case) -> bool:
    return chat_streamed(case) and bool(case.tools)


def chat_with_tools(case: Case) -> bool:
    return chat_answer(case) and bool(case.tools)


def chat_streamed_asking_usage(case: Case) -> bool:
    return chat_streamed(case) and case.asks_usage


def tool_choice_is(value: str):
    def applies(case: Case) -> bool:
        return chat_with_tools(case) and case.tool_choice == value

    applies.__name__ = f"tool_choice_is_{value}"
    return applies


def tool_choice_object(case: Case) -> bool:
    return chat_with_tools(case) and isinstance(case.tool_choice, dict)


def chat_json_object(case: Case) -> bool:
    return chat_answer(case) and format_type(case) == "json_object"


def chat_parallel_calls_off(case: Case) -> bool:
    return chat_with_tools(case) and case.body.get("parallel_tool_calls") is False


def chat_with_stop(case: Case) -> bool:
    return chat_answer(case) and isinstance(case.body, dict) and bool(case.body.get("stop"))
