"""Which cases a check applies to, decided from the case alone (what was asked, not what came back): the rules every
API shares. An API's own rules are in its folder (`lmconform/apis/<api>/checks/scope.py`)."""

from __future__ import annotations

from typing import Any

from lmconform.apis import HTTP, api_of
from lmconform.cases import Case
from lmconform.normalize.reading import reading


def any_case(case: Case) -> bool:
    return True


def over_http(case: Case) -> bool:
    return api_of(case.api).transport == HTTP


def valid_request(case: Case) -> bool:
    return case.valid and over_http(case)


def invalid_request(case: Case) -> bool:
    return case.invalid and over_http(case)


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


def member_at(holder: Any, path: tuple[str, ...]) -> Any:
    """The member of nested objects at `path` (None where one is missing; `holder` itself for an empty path)."""
    for key in path:
        holder = holder.get(key) if isinstance(holder, dict) else None
    return holder


def format_type(case: Case) -> str | None:
    """The output format a case asks for, where its API's entry says a request names it (`format_at`: chat's
    `response_format.type`, Responses' `text.format.type`)."""
    holder = member_at(case.body, api_of(case.api).format_at or ("",))
    kind = holder.get("type") if isinstance(holder, dict) else None
    return kind if isinstance(kind, str) else None


def format_schema(api: str, body: Any) -> Any:
    """The JSON Schema a request's `json_schema` output format holds, or None."""
    entry = api_of(api)
    holder = member_at(body, entry.format_at) if entry.format_at else None
    if not isinstance(holder, dict) or holder.get("type") != "json_schema":
        return None
    schema = member_at(holder, entry.format_schema_at)
    return schema if isinstance(schema, dict) else None


def binding_tool_schemas(api: str, tools: list) -> dict[str, Any]:
    """By tool name, the JSON Schema each tool binds its calls' arguments to: a strict tool's (its API's `strict`),
    or every tool's where the API binds them all (Anthropic's `input_schema`)."""
    entry = api_of(api)
    bound = {}
    for tool in tools:
        name, schema = member_at(tool, entry.tool_name_at), member_at(tool, entry.tool_schema_at)
        binds = entry.tool_schemas_bind or (bool(entry.tool_strict_at) and
                                            member_at(tool, entry.tool_strict_at) is True)
        if binds and isinstance(name, str) and isinstance(schema, dict) and entry.tool_schema_at:
            bound[name] = schema
    return bound


def asks_json(case: Case) -> bool:
    """A request that asks for JSON output (a JSON schema, or any JSON object)."""
    return generates(case) and format_type(case) in ("json_schema", "json_object")


def asks_schema(case: Case) -> bool:
    """A request whose output format is a JSON Schema."""
    return generates(case) and format_schema(case.api, case.body) is not None


def grades_schema_keyword(case: Case) -> bool:
    """A case of the keyword matrix: a JSON Schema output format graded on one keyword family."""
    return case.schema_keyword is not None and over_http(case) and format_schema(case.api, case.body) is not None


def binds_tool_schemas(case: Case) -> bool:
    """A request with a tool whose schema binds its calls' arguments."""
    return generates_with_tools(case) and bool(binding_tool_schemas(case.api, case.tools))


