"""Which cases the text completions checks judge, decided from the case alone."""

from __future__ import annotations

from lmconform.cases import Case


def completions_answer(case: Case) -> bool:
    return case.api == "completions" and not case.invalid


def completions_streamed(case: Case) -> bool:
    return completions_answer(case) and case.streamed


def completions_body(case: Case) -> bool:
    return completions_answer(case) and not case.streamed


def completions_echo(case: Case) -> bool:
    return completions_answer(case) and isinstance(case.body, dict) and case.body.get("echo") is True


def completions_logprobs(case: Case) -> bool:
    logprobs = case.body.get("logprobs") if isinstance(case.body, dict) else None
    return completions_answer(case) and isinstance(logprobs, int) and not isinstance(logprobs, bool)


def completions_stop(case: Case) -> bool:
    return completions_answer(case) and isinstance(case.body, dict) and bool(case.body.get("stop"))
