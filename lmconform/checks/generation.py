"""Semantic checks on the generation vocabulary: written once, true of every transport that normalises into it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    LMSTUDIO_GENERATOR_ORDER,
    LMSTUDIO_STRUCTURED_OUTPUT,
    LOCALAI_CALL_ECHOED,
    OPENAI_JSON_MODE,
    VOID_PARSER,
)
from lmconform.checks.registry import check
from lmconform.checks.scope import asks_json_mode, asks_json_schema, generates, generates_with_tools
from lmconform.normalize.events import (
    End,
    Text,
    ToolCallArgumentsFragment,
    ToolCallEnded,
    ToolCallFailed,
    ToolCallName,
    ToolCallStarted,
)
from lmconform.vocabulary import Failure, Level, NotApplicable


@check("generation.answer.not_empty", level=Level.MUST, applies=generates, ref=VOID_PARSER,
       title="the answer has text, reasoning or a tool call", proven_by=("error-as-complete",))
def not_empty(observed: Observed) -> Iterator[Failure]:
    # Void's "Response from model was empty" fires exactly when all three are empty.
    observed.require_success()
    if observed.generation.is_empty():
        yield Failure("text, reasoning or a tool name", "none of them", observed.exchange.body_excerpt(400))


@check("generation.tool_call.name_once", level=Level.MUST, applies=generates_with_tools, ref=VOID_PARSER,
       title="a tool call's name is sent once", proven_by=("id-name-repeated",))
def name_once(observed: Observed) -> Iterator[Failure]:
    # Clients concatenate name fragments: a repeated name becomes "get_weatherget_weather".
    for call in observed.require_tool_calls():
        if len(call.names) > 1:
            yield Failure(f"the name {call.name!r} once", f"sent {len(call.names)} times", str(call.names[1].source))


@check("generation.tool_call.arguments_are_strings", level=Level.MUST, applies=generates_with_tools, ref=VOID_PARSER,
       title="tool-call arguments arrive as string fragments", proven_by=("arguments-object",))
def arguments_are_strings(observed: Observed) -> Iterator[Failure]:
    for call in observed.require_tool_calls():
        for fragment in call.fragments:
            if not isinstance(fragment.fragment, str):
                yield Failure("a string fragment", f"{type(fragment.fragment).__name__} {fragment.fragment!r}"[:200],
                              str(fragment.source))


@check("generation.tool_call.arguments_json_object", level=Level.MUST, applies=generates_with_tools, ref=VOID_PARSER,
       title="a tool call's concatenated arguments parse to a JSON object", proven_by=("parameters-as-string",))
def arguments_json_object(observed: Observed) -> Iterator[Failure]:
    for call in observed.require_tool_calls():
        value, error = call.parsed_arguments()
        evidence = str(call.fragments[-1].source) if call.fragments else str(call.started.source)
        if error:
            yield Failure(f"JSON object arguments for {call.name!r}", f"not JSON: {error}", evidence)
        elif not isinstance(value, dict):
            yield Failure(f"JSON object arguments for {call.name!r}", f"a JSON {type(value).__name__}", evidence)


@check("generation.tool_call.arguments_not_cumulative", level=Level.MUST, applies=generates_with_tools, ref=VOID_PARSER,
       title="each arguments fragment adds to the previous ones instead of repeating them",
       proven_by=("arguments-cumulative",))
def arguments_not_cumulative(observed: Observed) -> Iterator[Failure]:
    for call in observed.require_tool_calls():
        so_far = ""
        for fragment in call.fragments:
            if not isinstance(fragment.fragment, str):
                continue
            if so_far and len(fragment.fragment) > len(so_far) and fragment.fragment.startswith(so_far):
                yield Failure("only the new characters", f"all {len(fragment.fragment)} characters so far again",
                              str(fragment.source))
                break
            so_far += fragment.fragment


# Arguments shorter than this ("{}") may appear in any text by chance.
ECHO_MIN_CHARS = 10

# Where each event may stand: the grammar of the generator API, one state per position.
_PHASE_TEXT, _PHASE_CALL, _PHASE_DONE = "text", "call", "done"


@check("generation.order.follows_grammar", level=Level.SHOULD, applies=generates, ref=LMSTUDIO_GENERATOR_ORDER,
       title="text and tool calls come in the generator API's order, one call at a time",
       proven_by=("tool-calls-interleaved",))
def follows_grammar(observed: Observed) -> Iterator[Failure]:
    # SHOULD: OpenAI clients key deltas by index and cope; LM Studio's generator API (and anything that converts
    # a stream into it) requires each call to be complete before the next starts.
    observed.require_success()
    phase, open_call, finished = _PHASE_TEXT, None, set()
    for event in observed.generation.events:
        if phase == _PHASE_DONE:
            yield Failure("nothing after the end", type(event).__name__, str(event.source))
            return
        if isinstance(event, ToolCallStarted):
            if open_call is not None:
                yield Failure(f"call {open_call} ended before call {event.call} starts", "a new call started",
                              str(event.source))
                return
            open_call = event.call
        elif isinstance(event, (ToolCallName, ToolCallArgumentsFragment)):
            if event.call != open_call:
                where = "after it ended" if event.call in finished else "while another call is open"
                yield Failure(f"parts of call {event.call} only while it is open", f"a {type(event).__name__} {where}",
                              str(event.source))
                return
        elif isinstance(event, (ToolCallEnded, ToolCallFailed)):
            finished.add(event.call)
            open_call = None
        elif isinstance(event, Text) and open_call is not None:
            yield Failure(f"call {open_call} ended before text", "text inside a tool call", str(event.source))
            return
        elif isinstance(event, End):
            phase = _PHASE_DONE


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


@check("generation.tool_call.not_echoed_in_content", level=Level.SHOULD, applies=generates_with_tools,
       ref=LOCALAI_CALL_ECHOED, title="a tool call's arguments are not also written into the answer's text",
       proven_by=("tool-call-echoed-as-text",))
def not_echoed_in_content(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the user sees the call's JSON as the answer, and an agent that keeps the text in its history feeds
    # the call back to the model as prose; clients still run the call itself.
    text = _squeezed(observed.generation.text())
    for call in observed.require_tool_calls():
        arguments = _squeezed(call.arguments_text)
        if len(arguments) >= ECHO_MIN_CHARS and arguments in text:
            yield Failure(f"the arguments of {call.name!r} only in the call", "the same JSON in the content too",
                          str(call.started.source))


def _cut(observed: Observed) -> bool:
    end = observed.generation.end
    return end is not None and end.finish_reason in ("length", "incomplete")


def _text_asked_as_json(observed: Observed) -> str:
    """The text of an answer asked for as JSON, when there is one to judge: not a tool call, a refusal (the model
    declining says so in words, in a member of its own) or an answer cut at its output cap."""
    observed.require_success()
    generation = observed.generation
    if generation.refused:
        raise NotApplicable(f"the model refused: {generation.text('refusal')[:80]!r}")
    if generation.tool_calls() or _cut(observed):
        raise NotApplicable("the answer called a tool, or was cut at its output cap")
    text = generation.text().strip()
    if not text:
        raise NotApplicable("no text at all: generation.answer.not_empty reports it")
    return text


def _json_failure(observed: Observed, text: str) -> Failure | None:
    try:
        json.loads(text)
    except ValueError as error:
        return Failure("a JSON document", f"not JSON ({error}): {text[:120]!r}", observed.exchange.body_excerpt(300))
    return None


@check("generation.structured_output.text_is_json", level=Level.SHOULD, applies=asks_json_schema,
       ref=LMSTUDIO_STRUCTURED_OUTPUT, title="an answer asked for under a JSON schema is JSON",
       proven_by=("structured-output-ignored",))
def text_is_json(observed: Observed) -> Iterator[Failure]:
    # SHOULD: `responses.parse()` and `generateObject()` parse the text and raise on prose; a model may still
    # fail a schema, so clients retry. An answer cut by its output cap is not judged.
    failure = _json_failure(observed, _text_asked_as_json(observed))
    if failure is not None:
        yield failure


@check("generation.json_mode.json_or_refused", level=Level.MUST, applies=asks_json_mode, ref=OPENAI_JSON_MODE,
       title="JSON mode (`json_object`) is answered with JSON or refused with a 4xx, never with prose or a 5xx",
       proven_by=("json-object-ignored",))
def json_or_refused(observed: Observed) -> Iterator[Failure]:
    # MUST: a client that asks for JSON mode parses the text (LangChain's JSON mode, n8n's output parser) and
    # fails on prose; a server that cannot keep the promise says so with a 4xx, which the client can act on. A
    # refusal by the model, in its own member, is an answer too.
    status = observed.exchange.status or 0
    if 400 <= status < 500:
        raise NotApplicable(f"refused with HTTP {status}: a client can fall back")
    if status >= 500:
        yield Failure("JSON, or a 4xx refusal", f"HTTP {status}", observed.exchange.body_excerpt())
        return
    failure = _json_failure(observed, _text_asked_as_json(observed))
    if failure is not None:
        yield failure
