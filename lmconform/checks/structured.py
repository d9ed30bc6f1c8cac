"""Answers asked for under a JSON Schema, held to it: a JSON output format's text (chat's `response_format`,
Responses' `text.format`), the arguments of calls to tools whose schema binds them (strict functions, Anthropic's
`input_schema`), streamed or not, read through the generation vocabulary; and the keyword matrix, which grades what
a server did with one keyword family of a schema: enforced, refused or ignored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.checks.observed import Observed
from lmconform.checks.refs import JSON_SCHEMA_VALIDATION, OPENAI_STRICT_FUNCTIONS, OPENAI_STRUCTURED_OUTPUTS
from lmconform.checks.registry import check
from lmconform.checks.scope import (
    asks_schema,
    binding_tool_schemas,
    binds_tool_schemas,
    format_schema,
    grades_schema_keyword,
)
from lmconform.normalize.events import Text
from lmconform.schemas.answers import Breach, NotASchema, breaches
from lmconform.vocabulary import Failure, Grade, Level, NotApplicable

EVIDENCE_CHARS = 160


def _held_to(value: Any, schema: Any) -> list[Breach]:
    try:
        return breaches(value, schema)
    except NotASchema as error:
        raise NotApplicable(f"the request's schema is not a JSON Schema: {error}") from None


def _failure(breach: Breach, whose: str, evidence: str) -> Failure:
    return Failure(f"{whose} that holds `{breach.keyword}` at {breach.pointer or '/'}: {breach.expected}",
                   f"{breach.actual}", evidence)


def _json_answer(observed: Observed) -> tuple[Any, str]:
    """The answer's text as JSON, and the event that ended it (the body, unstreamed); NotApplicable where there is
    no JSON document to judge: a call, prose (text_is_json reports it), a document cut at the output cap. A whole
    document followed by whitespace up to the cap (a grammar that lets a model pad its answer) is judged."""
    observed.require_success()
    generation = observed.generation
    if generation.tool_calls():
        raise NotApplicable("the answer called a tool")
    try:
        value = json.loads(generation.text())
    except ValueError:
        end = generation.end
        cut = end is not None and end.finish_reason in ("length", "incomplete")
        raise NotApplicable("the answer was cut at its output cap before its JSON ended" if cut else
                            "the answer is not JSON: generation.structured_output.text_is_json reports it") from None
    texts = [event for event in generation.events if isinstance(event, Text) and event.channel == "content"]
    evidence = str(texts[-1].source) if observed.exchange.is_event_stream and texts else \
        observed.exchange.body_excerpt(300)
    return value, evidence


@check("generation.structured_output.conforms", level=Level.SHOULD, applies=asks_schema, ref=OPENAI_STRUCTURED_OUTPUTS,
       title="an answer asked for under a JSON Schema holds every keyword of it",
       proven_by=("structured-output-off-schema", "responses-output-off-schema"))
def conforms(observed: Observed) -> Iterator[Failure]:
    # SHOULD: `responses.parse()`, pydantic and zod reject such an answer, but without constrained decoding a model
    # may break a schema, and clients retry; the keyword matrix says which keywords a server enforces.
    value, evidence = _json_answer(observed)
    for breach in _held_to(value, format_schema(observed.case.api, observed.request_body)):
        yield _failure(breach, "an answer", evidence)


@check("generation.tool_call.arguments_conform", level=Level.SHOULD, applies=binds_tool_schemas,
       ref=OPENAI_STRICT_FUNCTIONS, title="a call's arguments hold the schema of a tool that binds them (strict, or "
       "Anthropic's input_schema)", proven_by=("structured-output-off-schema", "tool-input-off-schema"))
def arguments_conform(observed: Observed) -> Iterator[Failure]:
    # SHOULD: an agent runs the tool with what it got, or fails its own validation and asks again.
    schemas = binding_tool_schemas(observed.case.api, observed.case.tools)
    for call in observed.require_tool_calls():
        value, error = call.parsed_arguments()
        if error or call.name not in schemas:
            continue  # arguments that are not JSON: generation.tool_call.arguments_json_object reports them
        evidence = str(call.fragments[-1].source) if call.fragments else str(call.started.source)
        for breach in _held_to(value, schemas[call.name]):
            yield _failure(breach, f"arguments of {call.name!r}", evidence)


@check("generation.structured_output.keyword_grade", level=Level.INFO, applies=grades_schema_keyword,
       ref=JSON_SCHEMA_VALIDATION, title="what the server does with one JSON Schema keyword family: enforced (every "
       "answer holds it), refused (a 4xx) or ignored (accepted, and an answer breaks it)",
       proven_by=("structured-output-off-schema", "schema-bounds-dropped"))
def keyword_grade(observed: Observed) -> Iterator[Failure | Grade]:
    # INFO: the matrix of keywords, one case per family, each pushing the model to break its keyword, so that only
    # a server that constrains decoding (or refuses the keyword) keeps it. With --repeat K, one broken answer of the
    # K grades the family ignored.
    family, exchange = observed.case.schema_keyword or "", observed.exchange
    if 400 <= (exchange.status or 0) < 500:
        said = exchange.body_excerpt(EVIDENCE_CHARS)
        named = "names" if _keywords(family) & set(_words(said)) else "does not name"
        yield Grade(family, "refused", f"HTTP {exchange.status}, which {named} the keyword: {said}")
        return
    value, evidence = _json_answer(observed)
    found = _held_to(value, format_schema(observed.case.api, observed.request_body))
    answer = json.dumps(value, ensure_ascii=False)
    answer = answer if len(answer) <= EVIDENCE_CHARS else f"{answer[:EVIDENCE_CHARS]}…"
    if not found:
        yield Grade(family, "enforced", f"the answer {answer} holds the schema")
        return
    yield Grade(family, "ignored", f"{found[0]} in {answer}")
    for breach in found:
        yield _failure(breach, "an answer", evidence)


def _keywords(family: str) -> set[str]:
    """The keywords a family's name holds: "minimum/maximum" → minimum, maximum; "$ref (recursive)" → $ref."""
    return {word for word in _words(family) if word not in ("recursive", "union")}


def _words(text: str) -> list[str]:
    return [word for word in "".join(c if c.isalnum() or c == "$" else " " for c in text).split()]
