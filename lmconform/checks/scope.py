"""Which cases a check applies to, decided from the case alone (what was asked, not what came back): the rules every
API shares. An API's own rules are in its folder (`lmconform/apis/<api>/checks/scope.py`)."""

from __future__ import annotations

from typing import Any

from lmconform.api_table import HTTP, api_of
from lmconform.cases import Case, HttpTurn
from lmconform.normalize.reading import reading
from lmconform.vocabulary import LONG_PROMPT_WORDS, Level


def any_case(case: Case) -> bool:
    return True


def agent_case(case: Case) -> bool:
    """A coding agent's run, or a request it sent (lmconform.fuzz.agents)."""
    return case.agent is not None


def agent_answerable(case: Case) -> bool:
    """An agent's run on a task it can answer (its file fits a context)."""
    return case.agent is not None and not case.agent.file_words


def agent_overflow(case: Case) -> bool:
    """An agent's run on a task whose file is longer than the target's context: it cannot answer, and how it ends
    is what is judged."""
    return case.agent is not None and bool(case.agent.file_words)


def over_http(case: Case) -> bool:
    """A case of HTTP requests: over stdio, or over a WebSocket (the Responses API's mode), a case is not."""
    return api_of(case.api).transport == HTTP and case.websocket is None


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
    return Level(level) if isinstance(level, str) and level in Level.__members__ else Level.MUST


def refusal_required(case: Case) -> bool:
    return invalid_request(case) and refusal_level(case) is Level.MUST


def refusal_advised(case: Case) -> bool:
    return invalid_request(case) and refusal_level(case) is Level.SHOULD


def refusal_expected(case: Case) -> bool:
    """The request, or one of the turns (an unknown previous_response_id), is to be refused with an error body."""
    return over_http(case) and (case.invalid or any(turn.unknown_previous_id for turn in case.turns_of(HttpTurn)))


def streamed(case: Case) -> bool:
    return case.streamed and not case.invalid


def _words(value: Any) -> int:
    """The words of every text a request body holds."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(item) for item in value)
    if isinstance(value, dict):
        return sum(_words(item) for item in value.values())
    return 0


def long_prompt_stream(case: Case) -> bool:
    """A streamed request of a prompt a local server takes a while to prefill, within the context (not an overflow)."""
    return streamed(case) and generates(case) and case.expect_status == "success" and not case.overflows_context \
        and _words(case.body) >= LONG_PROMPT_WORDS


def streamed_ending_with_done(case: Case) -> bool:
    """A streamed request of an API whose streams end with `data: [DONE]` (its entry says so)."""
    return streamed(case) and api_of(case.api).ends_with_done


def generates(case: Case) -> bool:
    """A request that may be answered with a generation (valid, or one servers may accept), on any API."""
    api = api_of(case.api)
    return (reading(case.api).generates and not case.invalid and case.method == api.method
            and case.path.partition("?")[0] == api.path and case.raw_body is None)


def generates_with_reasoning_channel(case: Case) -> bool:
    """A generating request of an API whose answers keep reasoning apart from the text (its entry says so)."""
    return generates(case) and api_of(case.api).reasoning_channel


def generates_with_tools(case: Case) -> bool:
    return generates(case) and bool(case.tools)


def context_overflow(case: Case) -> bool:
    """A request whose prompt is longer than the target's context."""
    return over_http(case) and case.overflows_context


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


def asks_json_schema(case: Case) -> bool:
    return generates(case) and format_type(case) == "json_schema"




def paired(case: Case) -> bool:
    """A request sent streamed and not (`"pair": "stream"`), whose two answers the pair checks compare."""
    return generates(case) and case.pair == "stream"


def forced_tool(case: Case) -> dict | None:
    """The tool a request's `tool_choice` forces, from the request's tools: the one it names (`{"type": "function",
    "function": {"name"}}`, or with the name at its top as the Responses and Messages APIs have it), or the only tool
    when any call is required ("required", Messages' `{"type": "any"}`); None when it forces none."""
    choice = case.tool_choice
    specs = [tool.get("function", tool) for tool in case.tools if isinstance(tool, dict)]
    if (choice == "required" or isinstance(choice, dict) and choice.get("type") == "any") and len(specs) == 1:
        return specs[0] if isinstance(specs[0], dict) else None
    named = choice if isinstance(choice, dict) else {}
    name = named.get("name") or (named.get("function") or {}).get("name")
    return next((spec for spec in specs if isinstance(spec, dict) and name and spec.get("name") == name), None)


def paired_forced_enum(case: Case) -> bool:
    """A pair whose request forces a call of a tool whose every argument is an enumeration: the one answer a model
    can give is fixed by the request, whether it is streamed or not (temperature 0 alone does not fix it)."""
    tool = forced_tool(case) if paired(case) else None
    parameters = (tool.get("parameters") or tool.get("input_schema")) if tool else None
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    return isinstance(properties, dict) and bool(properties) and all(isinstance(schema, dict) and "enum" in schema
                                                                    for schema in properties.values())


def asks_logprobs(case: Case) -> bool:
    """A request that asks for its text's log probabilities, as its API's entry says a request does."""
    asked = api_of(case.api).logprobs_asked
    value = case.body.get(asked[0]) if asked and isinstance(case.body, dict) else None
    return generates(case) and asked is not None and (value == asked[1] or isinstance(value, list) and asked[1] in value)


def alternatives_asked(case: Case) -> int | None:
    """How many alternatives to each token the request asks for (`top_logprobs`, chat's and the Responses API's
    name alike); None when it names no whole number from 0 up."""
    asked = case.body.get("top_logprobs") if isinstance(case.body, dict) else None
    return asked if isinstance(asked, int) and not isinstance(asked, bool) and asked >= 0 else None


def asks_top_logprobs(case: Case) -> bool:
    """A request for log probabilities that also says how many alternatives each token brings."""
    return asks_logprobs(case) and alternatives_asked(case) is not None


def paired_stored(case: Case) -> bool:
    """A pair of an API whose server gives its answers back by id (its entry's `stored_path`)."""
    return paired(case) and api_of(case.api).stored_path is not None


def reports_usage(case: Case) -> bool:
    """A request whose answer may report token usage in a form its API's reading knows."""
    return generates(case) and reading(case.api).usage is not None


def asks_json_mode(case: Case) -> bool:
    """JSON mode: any JSON object, no schema (chat's `response_format`, Responses' `text.format`)."""
    return generates(case) and format_type(case) == "json_object"


# How a request carries a previous turn's reasoning back, in each API's words: a chat assistant message's reasoning
# member (either name), a Responses input item of type "reasoning", an Anthropic "thinking" block.
_REASONING_MEMBERS = ("reasoning", "reasoning_content")
_REASONING_PARTS = {"reasoning": ("content", "summary"), "thinking": ("thinking",)}


def carried_reasoning(body: object) -> list[str]:
    """The reasoning of earlier turns a request sends back, as texts: looked for in the lists of the body (its
    messages or input items and their content), never in its top-level options (`reasoning: {"effort": …}`)."""
    found: list[str] = []
    items = body.values() if isinstance(body, dict) else []
    for listed in (value for value in items if isinstance(value, list)):
        for entry in (entry for entry in listed if isinstance(entry, dict)):
            found += [entry[name] for name in _REASONING_MEMBERS if isinstance(entry.get(name), str) and entry[name]]
            kind = entry.get("type")
            for key in _REASONING_PARTS.get(kind, ()) if isinstance(kind, str) else ():
                value = entry.get(key)
                parts = value if isinstance(value, list) else [{"text": value}]
                found += [part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)]
            found += carried_reasoning({"content": entry.get("content")}) if isinstance(entry.get("content"), list) else []
    return [text for text in found if text.strip()]


def carries_reasoning(case: Case) -> bool:
    """A request that sends a previous turn's reasoning back, as agents with interleaved thinking do."""
    return generates(case) and bool(carried_reasoning(case.body))


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


