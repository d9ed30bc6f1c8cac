"""Which cases the bridge protocol checks judge, decided from the case alone."""

from __future__ import annotations

from lmconform.apis.vscodelm import CANCEL, CHAT_RESPONSE
from lmconform.cases import Case, StdioTurn


def vscodelm(case: Case) -> bool:
    return case.api == "vscodelm"


def vscodelm_valid(case: Case) -> bool:
    return vscodelm(case) and case.valid


def vscodelm_invalid(case: Case) -> bool:
    return vscodelm(case) and case.invalid


def vscodelm_chat(case: Case) -> bool:
    """A valid case that asks the bridge for at least one answer."""
    return vscodelm_valid(case) and CHAT_RESPONSE in case.methods


def vscodelm_with_tools(case: Case) -> bool:
    return vscodelm_chat(case) and bool(case.tools)


def vscodelm_tool_result(case: Case) -> bool:
    return vscodelm_chat(case) and any(turn.answers_call_of for turn in case.turns_of(StdioTurn))


def vscodelm_commit(case: Case) -> bool:
    """A turn whose history is an earlier turn's, its answer as it came, and more."""
    return vscodelm_chat(case) and any(turn.previous and not turn.answers_call_of and turn.edited_answer is None
                                       for turn in case.turns_of(StdioTurn))


def vscodelm_discard(case: Case) -> bool:
    return vscodelm_chat(case) and any(turn.edited_answer is not None for turn in case.turns_of(StdioTurn))


def vscodelm_cancel(case: Case) -> bool:
    return vscodelm_chat(case) and any(turn.cancels for turn in case.turns_of(StdioTurn))


def vscodelm_cancel_unknown(case: Case) -> bool:
    """A cancel whose requestId is written in the case: an id the bridge never answered."""
    return vscodelm_valid(case) and ((case.method == CANCEL and case.raw_body is None)
                                     or any(turn.method == CANCEL and not turn.cancels for turn in case.turns_of(StdioTurn)))


def vscodelm_method(method: str):
    def applies(case: Case) -> bool:
        return vscodelm_valid(case) and case.method == method and case.raw_body is None and not case.notification

    applies.__name__ = f"vscodelm_method_{method.rpartition('/')[2]}"
    return applies


def vscodelm_error_code(code: int):
    def applies(case: Case) -> bool:
        return vscodelm_invalid(case) and case.expect_code == code

    applies.__name__ = f"vscodelm_error_code_{-code}"
    return applies
