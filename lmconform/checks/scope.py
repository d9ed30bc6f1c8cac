"""Which cases a check applies to, decided from the case alone (what was asked, not what came back): the rules every
API shares. An API's own rules are in its folder (`lmconform/apis/<api>/checks/scope.py`)."""

from __future__ import annotations

from lmconform.apis import HTTP, api_of
from lmconform.cases import Case
from lmconform.normalize.reading import reading
from lmconform.vocabulary import Level


def any_case(case: Case) -> bool:
    return True


def over_http(case: Case) -> bool:
    return api_of(case.api).transport == HTTP


def valid_request(case: Case) -> bool:
    return case.valid and over_http(case)


def invalid_request(case: Case) -> bool:
    return case.invalid and over_http(case)


def refusal_level(case: Case) -> Level:
    """How firmly an invalid request must be refused: the level of the constraint its generated violation breaks
    (a value out of the range OpenAI documents is SHOULD, as its schema grades it: lenient local servers accept it);
    MUST for a written invalid case and a hand-written violation, a structure no server can read."""
    generated = case.provenance.get("generated") if isinstance(case.provenance, dict) else None
    level = generated.get("level") if isinstance(generated, dict) else None
    return Level(level) if level in Level.__members__ else Level.MUST


def refusal_required(case: Case) -> bool:
    return invalid_request(case) and refusal_level(case) is Level.MUST


def refusal_advised(case: Case) -> bool:
    return invalid_request(case) and refusal_level(case) is Level.SHOULD


def refusal_expected(case: Case) -> bool:
    """The request, or one of the turns (an unknown previous_response_id), is to be refused with an error body."""
    return over_http(case) and (case.invalid or any(turn.unknown_previous_id for turn in case.turns))


def streamed(case: Case) -> bool:
    return case.streamed and not case.invalid


def streamed_ending_with_done(case: Case) -> bool:
    """A streamed request of an API whose streams end with `data: [DONE]` (its entry says so)."""
    return streamed(case) and api_of(case.api).ends_with_done


def generates(case: Case) -> bool:
    """A request that may be answered with a generation (valid, or one servers may accept), on any API."""
    api = api_of(case.api)
    return reading(case.api).generates and not case.invalid and case.method == api.method and case.raw_body is None


def generates_with_tools(case: Case) -> bool:
    return generates(case) and bool(case.tools)


def may_be_refused(case: Case) -> bool:
    """A request servers legitimately answer either way (a 2xx, or a 4xx for what they do not support)."""
    return case.expect_status == "success_or_client_error"


def format_type(case: Case) -> str | None:
    """The output format a case asks for, where its API's entry says a request names it (`format_at`: chat's
    `response_format.type`, Responses' `text.format.type`)."""
    holder = case.body
    for key in api_of(case.api).format_at or ("",):
        holder = holder.get(key) if isinstance(holder, dict) else None
    kind = holder.get("type") if isinstance(holder, dict) else None
    return kind if isinstance(kind, str) else None


def asks_json(case: Case) -> bool:
    """A request that asks for JSON output (a JSON schema, or any JSON object)."""
    return generates(case) and format_type(case) in ("json_schema", "json_object")


