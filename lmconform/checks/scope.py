"""Which cases a check applies to, decided from the case alone (what was asked, not what came back)."""

from __future__ import annotations

from lmconform.cases import Case


def any_case(case: Case) -> bool:
    return True


def valid_request(case: Case) -> bool:
    return case.valid


def invalid_request(case: Case) -> bool:
    return case.invalid


def streamed(case: Case) -> bool:
    return case.streamed and not case.invalid


def chat_answer(case: Case) -> bool:
    """A chat request that may be answered with a generation (valid, or one servers may accept)."""
    return case.api == "chat" and not case.invalid


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


def models_list(case: Case) -> bool:
    return case.api == "models" and case.path == "/v1/models" and case.method == "GET"
