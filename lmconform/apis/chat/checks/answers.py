"""Chat completions: properties of chunks, tool-call deltas, finish reasons and tool_choice handling."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lmconform.apis.chat.checks.scope import (
    chat_answer,
    chat_streamed,
    chat_streamed_asking_usage,
    chat_streamed_with_tools,
    chat_with_tools,
    tool_choice_is,
    tool_choice_object,
)
from lmconform.apis.chat.checks.views import chat_stream, require_stream
from lmconform.apis.chat.normalize import ChatChunk, ToolDelta, chunk_choices, first_delta
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    LMSTUDIO_ROLE_MISSING,
    LMSTUDIO_TOOL_CHOICE,
    LMSTUDIO_TOOLS,
    OPENAI_CHAT_CREATE,
    OPENAI_CHAT_STREAMING,
    OPENAI_PYTHON_STREAM_HELPER,
    USAGE_CHUNK_CRASH,
    VOID_PARSER,
    ZED_LMSTUDIO_PROVIDER,
)
from lmconform.checks.registry import check
from lmconform.normalize.events import MISSING
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, shown


def _entry_source(delta: ToolDelta) -> str:
    return str(delta.chunk.source)


def _tool_deltas(observed: Observed) -> list[ToolDelta]:
    deltas = require_stream(observed).tool_deltas
    if not deltas:
        raise NotApplicable("the answer streams no tool call")
    return deltas


# --- chunks -----------------------------------------------------------------------------------------------------


@check("chat.object.matches_mode", level=Level.MUST, applies=chat_answer, ref=OPENAI_PYTHON_STREAM_HELPER,
       title="`object` is chat.completion.chunk in a stream and chat.completion in a body",
       proven_by=("object-not-chunk",))
def object_matches_mode(observed: Observed) -> Iterator[Failure]:
    # MUST: the openai SDK's stream helper drops chunks that say "chat.completion" and then fails an assertion.
    observed.require_success()
    if observed.exchange.is_event_stream:
        for chunk in chat_stream(observed).data_chunks():
            if chunk.payload.get("object") != "chat.completion.chunk":
                yield Failure('"object": "chat.completion.chunk"', f'"object": {shown(chunk.payload.get("object"))}',
                              str(chunk.source))
    elif isinstance(observed.exchange.json, dict) and observed.exchange.json.get("object") != "chat.completion":
        yield Failure('"object": "chat.completion"', f'"object": {shown(observed.exchange.json.get("object"))}',
                      observed.exchange.body_excerpt())


@check("chat.stream.choices.exactly_one", level=Level.MUST, applies=chat_streamed, ref=USAGE_CHUNK_CRASH,
       title="every chunk has one choice; `choices: []` only for the usage chunk that was asked for",
       proven_by=("usage-chunk-unrequested",))
def choices_exactly_one(observed: Observed) -> Iterator[Failure]:
    # Clients index choices[0] (Void does); an unrequested empty list crashes them.
    for chunk in require_stream(observed).data_chunks():
        choices = chunk.payload.get("choices")
        if choices == [] and observed.case.asks_usage and chunk.payload.get("usage") is not None:
            continue
        if not isinstance(choices, list) or len(choices) != 1:
            reason = "" if observed.case.asks_usage else " (stream_options.include_usage was not asked)"
            count = len(choices) if isinstance(choices, list) else shown(choices)
            yield Failure("exactly one choice", f"{count} choices{reason}", str(chunk.source))


@check("chat.stream.usage.reported_when_asked", level=Level.SHOULD, applies=chat_streamed_asking_usage,
       ref=OPENAI_CHAT_STREAMING, title="`stream_options.include_usage` brings a usage chunk",
       proven_by=("usage-ignored",))
def usage_reported_when_asked(observed: Observed) -> Iterator[Failure]:
    observed.require_documented("stream_usage")
    chunks = require_stream(observed).data_chunks()
    if not any(isinstance(chunk.payload.get("usage"), dict) for chunk in chunks):
        yield Failure("a chunk with `usage`", "no chunk carries usage", str(chunks[-1].source) if chunks else "")


@check("chat.stream.role.assistant_first", level=Level.MUST, applies=chat_streamed, ref=LMSTUDIO_ROLE_MISSING,
       title='the first delta says `role: "assistant"`', proven_by=("role-missing",))
def role_assistant_first(observed: Observed) -> Iterator[Failure]:
    # MUST: LangChain's function calling broke on LM Studio 0.3.9 streams whose tool-call-only answer carried no
    # role at all. Later deltas are chat.stream.role.once's.
    chunks = [chunk for chunk in require_stream(observed).data_chunks() if chunk_choices(chunk)]
    if chunks and first_delta(chunks[0]).get("role") != "assistant":
        yield Failure('delta.role "assistant" in the first chunk',
                      f"role {shown(first_delta(chunks[0]).get('role', MISSING))}", str(chunks[0].source))


@check("chat.stream.chunk.id_stable", level=Level.SHOULD, applies=chat_streamed, ref=OPENAI_CHAT_STREAMING,
       title="every chunk of a stream carries the same `id`", proven_by=("chunk-id-changes",))
def chunk_id_stable(observed: Observed) -> Iterator[Failure]:
    chunks = require_stream(observed).data_chunks()
    if chunks:
        first = chunks[0].payload.get("id")
        for chunk in chunks[1:]:
            if chunk.payload.get("id") != first:
                yield Failure(f"id {shown(first)}", f"id {shown(chunk.payload.get('id'))}", str(chunk.source))
                return


@check("chat.stream.finish_reason.exactly_once", level=Level.MUST, applies=chat_streamed, ref=OPENAI_CHAT_STREAMING,
       title="exactly one chunk carries a finish_reason (or the stream ends with an error event)",
       proven_by=("finish-reason-missing",))
def finish_reason_exactly_once(observed: Observed) -> Iterator[Failure]:
    # Agents decide whether to run tools from finish_reason; without one they cannot tell "done" from "cut off".
    # A stream that ends with an error event instead (vLLM's form for a failure after the headers) says why.
    if require_stream(observed).error_events():
        raise NotApplicable("the stream ends with an error event: chat.stream.error.openai_shape judges it")
    # Once for each choice: a stream of `n` choices tells their chunks apart by index, and ends each on its own.
    chunks = chat_stream(observed).data_chunks()
    finishing: dict[Any, list[ChatChunk]] = {}  # by choice index, the chunks that finish it
    for chunk in chunks:
        for choice in chunk_choices(chunk):
            if isinstance(choice, dict):
                ends = finishing.setdefault(choice.get("index", 0), [])
                ends += [chunk] if choice.get("finish_reason") is not None else []
    for index, ends in (finishing or {0: []}).items():
        if len(ends) != 1:
            evidence = str(ends[1].source) if len(ends) > 1 else (str(chunks[-1].source) if chunks else "")
            of_choice = f" for choice {index!r}" if len(finishing) > 1 else ""
            yield Failure(f"one chunk with a finish_reason{of_choice}", f"{len(ends)} chunks with one", evidence)


@check("chat.finish_reason.tool_calls_after_tool_call", level=Level.MUST, applies=chat_with_tools,
       ref=ZED_LMSTUDIO_PROVIDER, title='`finish_reason` is "tool_calls" when the answer calls a tool',
       proven_by=("finish-stop-after-tools",))
def finish_tool_calls(observed: Observed) -> Iterator[Failure]:
    # MUST: Zed's LM Studio provider emits the calls only on finish_reason "tool_calls" (a "stop" drops them), and
    # agent loops branch on it. "length" is no finding: the answer ran into max_tokens, and says so.
    observed.require_success()
    if observed.exchange.is_event_stream:
        observed.require_documented("streamed_finish_tool_calls")
    generation = observed.generation
    end = generation.end
    # A missing finish_reason is chat.stream.finish_reason.exactly_once's finding, not this one's.
    if generation.tool_calls() and end is not None and end.finish_reason not in (None, "tool_calls", "length"):
        yield Failure('finish_reason "tool_calls"', f"finish_reason {shown(end.finish_reason)}", str(end.source))


# --- tool-call deltas ---------------------------------------------------------------------------------------------


@check("chat.stream.tool_call.index_present", level=Level.MUST, applies=chat_streamed_with_tools,
       ref=OPENAI_PYTHON_STREAM_HELPER, title="every streamed tool-call delta has an integer `index`",
       proven_by=("tool-index-missing",))
def index_present(observed: Observed) -> Iterator[Failure]:
    for delta in _tool_deltas(observed):
        index = delta.entry.get("index", MISSING) if isinstance(delta.entry, dict) else MISSING
        if not isinstance(index, int) or isinstance(index, bool):
            yield Failure("an integer index", f"index {shown(index)}", _entry_source(delta))


@check("chat.stream.tool_call.index_zero", level=Level.MUST, applies=chat_streamed_with_tools, ref=VOID_PARSER,
       title="tool calls are numbered 0, 1, 2… in the order they start", proven_by=("tool-index-one",))
def index_zero(observed: Observed) -> Iterator[Failure]:
    # Void reads only index 0; the openai SDK indexes a list with it.
    expected = 0
    for delta in _tool_deltas(observed):
        index = delta.entry.get("index") if isinstance(delta.entry, dict) else None
        if not delta.starts_call or not isinstance(index, int):
            continue
        if index > expected:
            yield Failure(f"the next call at index {expected}", f"index {index}", _entry_source(delta))
        expected = max(expected, index + 1)


@check("chat.stream.tool_call.starts_with_id_and_name", level=Level.MUST, applies=chat_streamed_with_tools,
       ref=LMSTUDIO_TOOLS, title="the first delta of a tool call carries its `id` and `function.name`",
       proven_by=("tool-id-missing",))
def starts_with_id_and_name(observed: Observed) -> Iterator[Failure]:
    for delta in _tool_deltas(observed):
        if not delta.starts_call:
            continue
        function = delta.entry.get("function") if isinstance(delta.entry.get("function"), dict) else {}
        missing = [field for field, value in (("id", delta.entry.get("id")), ("function.name", function.get("name")))
                   if not isinstance(value, str) or not value]
        if missing:
            yield Failure("a non-empty id and function.name", f"missing {', '.join(missing)}", _entry_source(delta))


@check("chat.stream.tool_call.type_is_function", level=Level.MUST, applies=chat_streamed_with_tools,
       ref=OPENAI_PYTHON_STREAM_HELPER, title='a tool call says `type: "function"` first and never anything else',
       proven_by=("type-null-continuation",))
def type_is_function(observed: Observed) -> Iterator[Failure]:
    # The openai SDK asserts `type == "function"` on every delta that has the key, null included.
    for delta in _tool_deltas(observed):
        if not isinstance(delta.entry, dict):
            continue
        kind = delta.entry.get("type", MISSING)
        if delta.starts_call and kind != "function":
            yield Failure('type "function" on the first delta', f"type {shown(kind)}", _entry_source(delta))
        elif not delta.starts_call and kind not in (MISSING, "function"):
            yield Failure('no type, or "function", on a continuation', f"type {shown(kind)}", _entry_source(delta))


@check("chat.stream.tool_call.id_once", level=Level.MUST, applies=chat_streamed_with_tools, ref=VOID_PARSER,
       title="a tool call's `id` is sent once, not repeated in later deltas", proven_by=("id-name-repeated",))
def id_once(observed: Observed) -> Iterator[Failure]:
    # Void concatenates ids across deltas: a repeated id becomes "814890118814890118".
    for delta in _tool_deltas(observed):
        if not delta.starts_call and isinstance(delta.entry, dict) and delta.entry.get("id"):
            yield Failure("no id on a continuation delta", f"id {shown(delta.entry['id'])} again", _entry_source(delta))


@check("chat.stream.tool_call.distinct_index_per_call", level=Level.MUST, applies=chat_streamed_with_tools,
       ref=OPENAI_CHAT_STREAMING, title="two different tool calls never share an index",
       proven_by=("two-calls-one-index",))
def distinct_index_per_call(observed: Observed) -> Iterator[Failure]:
    first_call_at: dict = {}
    for delta in _tool_deltas(observed):
        if not delta.starts_call:
            continue
        index = delta.entry.get("index", MISSING)
        key = repr(index)
        if key in first_call_at:
            yield Failure(f"a new index for a new call (id {shown(delta.entry.get('id'))})",
                          f"index {shown(index)} again, already used by call {shown(first_call_at[key])}",
                          _entry_source(delta))
        else:
            first_call_at[key] = delta.entry.get("id")


# --- tool_choice --------------------------------------------------------------------------------------------------


def _called_names(observed: Observed) -> list[str]:
    return [call.name for call in observed.generation.tool_calls()]


@check("chat.tool_choice.none_calls_no_tool", level=Level.MUST, applies=tool_choice_is("none"), ref=OPENAI_CHAT_CREATE,
       title='`tool_choice: "none"` is answered without a tool call', proven_by=("tool-choice-ignored",))
def none_calls_no_tool(observed: Observed) -> Iterator[Failure]:
    observed.require_success()
    for call in observed.generation.tool_calls():
        yield Failure("no tool call", f"a call to {call.name!r}", str(call.started.source))


@check("chat.tool_choice.required_calls_a_tool", level=Level.MUST, applies=tool_choice_is("required"),
       ref=OPENAI_CHAT_CREATE, title='`tool_choice: "required"` is answered with a tool call',
       proven_by=("empty-response",))
def required_calls_a_tool(observed: Observed) -> Iterator[Failure]:
    observed.require_documented("tool_choice_required")
    observed.require_success()
    if not observed.generation.tool_calls():
        text = observed.generation.text()
        yield Failure("at least one tool call", f"no tool call; text {text[:120]!r}", observed.exchange.body_excerpt(300))


@check("chat.tool_choice.object_form_answered", level=Level.MUST, applies=tool_choice_object, ref=LMSTUDIO_TOOL_CHOICE,
       title="a `tool_choice` object is refused with a 4xx error, or answered with a tool call",
       proven_by=("tool-choice-ignored",))
def object_form_answered(observed: Observed) -> Iterator[Failure | Note]:
    # LM Studio refuses the object form (bare-string 400); a proxy may rewrite it to "required". Both are fine;
    # accepting it and answering without any tool call means the choice was silently dropped.
    exchange = observed.exchange
    status = exchange.status or 0
    named = (observed.case.tool_choice.get("function") or {}).get("name")
    if 400 <= status < 500:
        yield Note(f"refused with HTTP {status}, as LM Studio does: {exchange.body_excerpt(200)}")
    elif not observed.succeeded:
        yield Failure("a 4xx refusal or a tool call", f"HTTP {status}", exchange.body_excerpt())
    elif not (names := _called_names(observed)):
        yield Failure(f"a call to {named!r} (or a 4xx refusal)", "HTTP 200 without a tool call: the choice was ignored",
                      exchange.body_excerpt(300))
    elif named in names:
        yield Note(f"honoured: called {named!r}")
    else:
        yield Note(f"accepted as if \"required\": called {names} instead of {named!r}")
