"""Which cases the native chat checks judge, decided from the case alone."""

from __future__ import annotations

from lmconform.cases import Case, HttpTurn


def native_answer(case: Case) -> bool:
    return case.api == "native_chat" and not case.invalid


def native_streamed(case: Case) -> bool:
    return native_answer(case) and case.streamed


def native_not_streamed(case: Case) -> bool:
    return native_answer(case) and not case.streamed


def native_stored(case: Case) -> bool:
    """A native chat the server is to store (the default): its result carries a response_id."""
    return native_answer(case) and not (isinstance(case.body, dict) and case.body.get("store") is False)


def native_chain(case: Case) -> bool:
    return native_answer(case) and any(turn.previous for turn in case.turns_of(HttpTurn))


def native_recall(case: Case) -> bool:
    return native_chain(case) and any(turn.recall for turn in case.turns_of(HttpTurn))
