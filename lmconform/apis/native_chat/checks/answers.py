"""LM Studio's own chat API (`/api/v1/chat`, 0.4.0+), as its REST docs describe it: named events from
`chat.start` to `chat.end`, phases opened and closed, tool calls started, given their arguments object and
concluded, a result that says what the stream said, and stored chats continued by their `response_id`."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.native_chat.checks.scope import (
    native_answer,
    native_chain,
    native_recall,
    native_stored,
    native_streamed,
)
from lmconform.apis.native_chat.normalize import NativeStream, native_result, normalize_native_stream
from lmconform.cases import HttpTurn
from lmconform.checks.observed import Observed, generation_of
from lmconform.checks.refs import LMSTUDIO_NATIVE_CHAT, LMSTUDIO_NATIVE_STREAMING
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Requirement

PHASES = ("model_load", "prompt_processing", "reasoning", "message")
OUTPUT_TYPES = ("message", "reasoning", "tool_call", "invalid_tool_call")


def _stream(observed: Observed) -> NativeStream:
    observed.require_success()
    if not observed.exchange.is_event_stream:
        raise NotApplicable(f"the answer is {observed.exchange.content_type or 'untyped'}, not an event stream")
    return observed.exchange.view(normalize_native_stream)


def _result(observed: Observed) -> tuple[dict, str]:
    """The result (the body, or what chat.end carries) and where it was read."""
    observed.require_success()
    if observed.exchange.is_event_stream:
        ends = _stream(observed).of_type("chat.end")
        if not ends:
            raise NotApplicable("no chat.end; native_chat.stream.lifecycle reports it")
        return native_result(observed.exchange), str(ends[-1].source)
    return native_result(observed.exchange), observed.exchange.body_excerpt(300)


@check("native_chat.stream.event_field_matches_type", level=Level.MUST, applies=native_streamed,
       ref=LMSTUDIO_NATIVE_STREAMING, title="every event has an SSE `event:` line equal to its data's `type`",
       proven_by=("native-event-name-mismatch",))
def event_field_matches_type(observed: Observed) -> Iterator[Failure]:
    # MUST: the docs define the stream by its named events; EventSource-style clients dispatch on the name.
    for event in _stream(observed).events:
        if not event.has_event_field or event.event.event != event.type:
            actual = f"event: {event.event.event}" if event.has_event_field else "no event: line"
            yield Failure(f"event: {event.type}", actual, str(event.source))
            return


@check("native_chat.stream.lifecycle", level=Level.MUST, applies=native_streamed, ref=LMSTUDIO_NATIVE_STREAMING,
       title="`chat.start` first and `chat.end` last, once each", proven_by=("native-no-chat-end",))
def lifecycle(observed: Observed) -> Iterator[Failure]:
    events = _stream(observed).events
    kinds = [event.type for event in events]
    last = str(events[-1].source) if events else observed.exchange.body_excerpt(200)
    if not kinds or kinds[0] != "chat.start":
        yield Failure("chat.start first", f"{kinds[0] if kinds else 'no event'} first", last)
    if not kinds or kinds[-1] != "chat.end":
        yield Failure("chat.end last", f"{kinds[-1] if kinds else 'no event'} last", last)
    for kind in ("chat.start", "chat.end"):
        if kinds.count(kind) > 1:
            yield Failure(f"one {kind}", f"{kinds.count(kind)}", last)


@check("native_chat.stream.phases_bracketed", level=Level.MUST, applies=native_streamed,
       ref=LMSTUDIO_NATIVE_STREAMING,
       title="each phase (prompt processing, reasoning, message…) is opened, then closed, one at a time",
       proven_by=("native-message-end-missing",))
def phases_bracketed(observed: Observed) -> Iterator[Failure]:
    open_phase = None
    for event in _stream(observed).events:
        phase, _, step = (event.type or "").rpartition(".")
        if phase not in PHASES:
            continue
        if step == "start":
            if open_phase is not None:
                yield Failure(f"{open_phase}.end before {event.type}", f"{event.type} while {open_phase} is open",
                              str(event.source))
                return
            open_phase = phase
        elif phase != open_phase:
            yield Failure(f"{event.type} inside {phase}.start … {phase}.end", f"{event.type} outside it",
                          str(event.source))
            return
        elif step == "end":
            open_phase = None
    if open_phase is not None:
        yield Failure(f"{open_phase}.end", "the stream ended with the phase open", observed.exchange.body_excerpt(200))


@check("native_chat.stream.tool_call_events", level=Level.MUST, applies=native_streamed,
       ref=LMSTUDIO_NATIVE_STREAMING,
       title="a tool call is started, given its arguments as an object, and concluded by success or failure",
       proven_by=("native-tool-arguments-string",))
def tool_call_events(observed: Observed) -> Iterator[Failure]:
    started = None
    for event in _stream(observed).events:
        kind = event.type or ""
        if kind == "tool_call.start":
            if started is not None:
                yield Failure(f"{started.get('tool')!r} concluded first", "another tool_call.start", str(event.source))
                return
            started = event
        elif kind in ("tool_call.arguments", "tool_call.success"):
            if started is None:
                yield Failure("tool_call.start first", kind, str(event.source))
                return
            if not isinstance(event.get("arguments"), dict):
                yield Failure("arguments as an object", f"{type(event.get('arguments')).__name__} "
                              f"{event.get('arguments')!r}"[:200], str(event.source))
                return
            if kind == "tool_call.success":
                if not isinstance(event.get("output"), str):
                    yield Failure("output, a string", repr(event.get("output"))[:200], str(event.source))
                started = None
        elif kind == "tool_call.failure":
            started = None
        elif started is not None and kind.startswith(("message.", "reasoning.", "chat.end")):
            yield Failure(f"tool_call.success or tool_call.failure for {started.get('tool')!r}", kind,
                          str(event.source))
            return


@check("native_chat.stream.result_matches_stream", level=Level.MUST, applies=native_streamed,
       ref=LMSTUDIO_NATIVE_STREAMING, title="`chat.end`'s result holds the message, reasoning and tools streamed",
       proven_by=("native-result-differs",))
def result_matches_stream(observed: Observed) -> Iterator[Failure]:
    # MUST: a client shows the deltas as they come and keeps the result: the two must be one answer.
    result, where = _result(observed)
    generation = observed.generation
    output = [item for item in result.get("output") or [] if isinstance(item, dict)]
    for kind, channel in (("message", "content"), ("reasoning", "reasoning")):
        kept = "".join(item.get("content") or "" for item in output if item.get("type") == kind)
        if kept != generation.text(channel):
            yield Failure(f"{kind} {generation.text(channel)[:120]!r} (streamed)", f"{kept[:120]!r}", where)
    kept_tools = [item.get("tool") for item in output if item.get("type") == "tool_call"]
    streamed = [call.name for call in generation.tool_calls()]
    if kept_tools != streamed:
        yield Failure(f"tool calls {streamed} (streamed)", f"{kept_tools}", where)


@check("native_chat.stream.instance_id_consistent", level=Level.MUST, applies=native_streamed,
       ref=LMSTUDIO_NATIVE_STREAMING, title="`chat.start` and the result name the same `model_instance_id`",
       proven_by=("native-instance-id-mismatch",))
def instance_id_consistent(observed: Observed) -> Iterator[Failure]:
    result, where = _result(observed)
    for event in _stream(observed).events:
        if event.type in ("chat.start", "model_load.start", "model_load.progress", "model_load.end") \
                and event.get("model_instance_id") != result.get("model_instance_id"):
            yield Failure(f"model_instance_id {result.get('model_instance_id')!r} (the result's)",
                          repr(event.get("model_instance_id")), str(event.source))


@check("native_chat.stream.progress_in_range", level=Level.SHOULD, applies=native_streamed,
       ref=LMSTUDIO_NATIVE_STREAMING, title="`progress` runs from 0 to 1 and never goes back",
       proven_by=("native-progress-out-of-range",))
def progress_in_range(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients draw a progress bar from it.
    last: dict[str, float] = {}
    for event in _stream(observed).events:
        kind = event.type or ""
        if not kind.endswith(".progress"):
            continue
        value = event.get("progress")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1 \
                or value < last.get(kind, 0):
            yield Failure(f"a number from {last.get(kind, 0)} to 1", repr(value), str(event.source))
            return
        last[kind] = value


@check("native_chat.response.shape", level=Level.MUST, applies=native_answer, ref=LMSTUDIO_NATIVE_CHAT,
       title="the result has `model_instance_id`, typed `output` items and integer `stats` token counts",
       proven_by=("native-stats-missing",))
def response_shape(observed: Observed) -> Iterator[Failure]:
    result, where = _result(observed)
    if not isinstance(result.get("model_instance_id"), str):
        yield Failure("model_instance_id, a string", repr(result.get("model_instance_id")), where)
    output = result.get("output")
    if not isinstance(output, list):
        yield Failure("output, a list", repr(output)[:200], where)
    for position, item in enumerate(output if isinstance(output, list) else []):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind not in OUTPUT_TYPES or (kind in ("message", "reasoning") and not isinstance(item.get("content"), str)):
            yield Failure(f"an item of type {', '.join(OUTPUT_TYPES)}", f"output[{position}] = {item!r}"[:200], where)
    stats = result.get("stats")
    stats = stats if isinstance(stats, dict) else {}
    for key in ("input_tokens", "total_output_tokens"):
        if isinstance(stats.get(key), bool) or not isinstance(stats.get(key), int):
            yield Failure(f"an integer stats.{key}", repr(stats.get(key)), where)


@check("native_chat.response.response_id_when_stored", level=Level.MUST, applies=native_stored,
       ref=LMSTUDIO_NATIVE_CHAT, title="a stored chat's result carries a `response_id` starting `resp_`",
       proven_by=("native-response-id-missing",))
def response_id_when_stored(observed: Observed) -> Iterator[Failure]:
    # MUST: `store` is true unless a request says otherwise, and this id is the only way to continue the chat.
    result, where = _result(observed)
    found = result.get("response_id")
    if not isinstance(found, str) or not found.startswith("resp_"):
        yield Failure('a response_id "resp_…"', repr(found), where)


@check("native_chat.chain.turn_answered", level=Level.MUST, applies=native_chain, ref=LMSTUDIO_NATIVE_CHAT,
       title="a request continuing a stored chat with `previous_response_id` is answered 2xx",
       proven_by=("native-previous-id-refused",))
def chain_turn_answered(observed: Observed) -> Iterator[Failure]:
    observed.require_success()
    for turn in observed.case.turns_of(HttpTurn):
        if turn.previous:
            exchange = observed.answer_to(turn.name)
            if exchange.status is None or not 200 <= exchange.status < 300:
                yield Failure("HTTP 2xx", f"HTTP {exchange.status}", exchange.body_excerpt(300))


@check("native_chat.chain.recall_answered", level=Level.MUST, applies=native_recall, ref=LMSTUDIO_NATIVE_CHAT,
       requires=[Requirement.REFERENCE_PROFILE],
       title="the reference model answers a recall question from the stored chat it continues",
       proven_by=("native-chain-ignored",))
def chain_recall_answered(observed: Observed) -> Iterator[Failure]:
    for turn in observed.case.turns_of(HttpTurn):
        if not turn.recall:
            continue
        exchange = observed.answer_to(turn.name)
        if exchange.status is None or not 200 <= exchange.status < 300:
            raise NotApplicable(f"the turn was answered HTTP {exchange.status}; native_chat.chain.turn_answered "
                                "reports it")
        shown = generation_of(observed.case.api, exchange).text()
        if turn.recall not in shown:
            yield Failure(f"an answer naming {turn.recall!r}", repr(shown[:200]), exchange.body_excerpt(300))
