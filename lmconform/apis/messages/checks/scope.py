"""Which cases the Anthropic Messages checks judge, decided from the case alone."""

from __future__ import annotations

from lmconform.cases import Case


def messages_answer(case: Case) -> bool:
    return case.api == "messages" and not case.invalid


def messages_streamed(case: Case) -> bool:
    return messages_answer(case) and case.streamed


def messages_not_streamed(case: Case) -> bool:
    return messages_answer(case) and not case.streamed


def messages_with_tools(case: Case) -> bool:
    return messages_answer(case) and bool(case.tools)


def messages_tool_choice_is(kind: str):
    def applies(case: Case) -> bool:
        return messages_with_tools(case) and isinstance(case.tool_choice, dict) and case.tool_choice.get("type") == kind

    applies.__name__ = f"messages_tool_choice_is_{kind}"
    return applies


def messages_parallel_disabled(case: Case) -> bool:
    return messages_with_tools(case) and isinstance(case.tool_choice, dict) \
        and case.tool_choice.get("disable_parallel_tool_use") is True


def messages_tool_result_turn(case: Case) -> bool:
    return messages_answer(case) and any(turn.answers_call_of for turn in case.turns)


def messages_asking_thinking(case: Case) -> bool:
    thinking = case.body.get("thinking") if isinstance(case.body, dict) else None
    return messages_answer(case) and isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def messages_with_stop_sequences(case: Case) -> bool:
    return messages_answer(case) and bool(isinstance(case.body, dict) and case.body.get("stop_sequences"))


def messages_refusable(case: Case) -> bool:
    """A Messages request a server may (or must) refuse: its error body is Anthropic's to shape."""
    return case.api == "messages" and not case.valid


def messages_without_max_tokens(case: Case) -> bool:
    return case.api == "messages" and "max_tokens" in case.omit \
        and not (isinstance(case.body, dict) and "max_tokens" in case.body)


COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


def messages_counted(case: Case) -> bool:
    """A Messages request whose turns send it again to `count_tokens`."""
    return messages_answer(case) and any(getattr(turn, "path", None) == COUNT_TOKENS_PATH for turn in case.turns)


def messages_grading_field(case: Case) -> bool:
    """A Messages request that sends one field of Claude Code's requests, to grade what the server does with it."""
    return case.api == "messages" and case.request_field is not None
