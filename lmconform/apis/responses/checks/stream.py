"""`/v1/responses` event streams: the grammar of events (created first, one terminal event last, items opened before
their parts, consistent indexes), deltas that agree with what is done, sequence numbers and `event:` fields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lmconform.apis.responses.checks.scope import responses_long_prompt_stream, responses_streamed
from lmconform.apis.responses.checks.views import final_response, require_responses_stream
from lmconform.apis.responses.normalize import TERMINAL_EVENTS
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    CODEX_STREAM_IDLE_TIMEOUT,
    OPEN_RESPONSES_SCHEMAS,
    OPEN_RESPONSES_SPEC,
    OPENAI_PYTHON_RESPONSES_HELPER,
    OPENAI_RESPONSES_STREAMING,
    VLLM_EVENT_STACK,
    VLLM_STREAM_ITEM_IDS,
)
from lmconform.checks.registry import check
from lmconform.checks.silence import longest_silence
from lmconform.normalize.data_events import TypedEvent
from lmconform.vocabulary import Failure, Level, Note, shown


def _is_done_sentinel(event: TypedEvent) -> bool:
    return event.event.data.strip() == "[DONE]"


def _events(observed: Observed) -> list[TypedEvent]:
    """The stream's events, without a `data: [DONE]` after the last one: no Responses event, but a sentinel some
    servers and proxies append (LiteLLM), which Open Responses' parser and the openai SDK skip."""
    events = require_responses_stream(observed).events
    return events[:-1] if events and _is_done_sentinel(events[-1]) else events


# An `error` event ends a stream too: OpenAI sends one when it is overloaded mid-answer.
STREAM_ENDS = (*TERMINAL_EVENTS, "error")


@check("responses.stream.lifecycle", level=Level.MUST, applies=responses_streamed, ref=OPENAI_RESPONSES_STREAMING,
       title="`response.created` comes first and once; one terminal event (or `error`) comes last",
       proven_by=("no-response-completed",))
def lifecycle(observed: Observed) -> Iterator[Failure]:
    events = _events(observed)
    types = [event.type for event in events]
    if not events or types[0] != "response.created":
        yield Failure("response.created first", f"{types[0] if types else 'no events'}",
                      str(events[0].source) if events else "")
    if types.count("response.created") > 1:
        yield Failure("response.created once", f"{types.count('response.created')} times")
    terminals = [i for i, kind in enumerate(types) if kind in STREAM_ENDS]
    if len(terminals) != 1 or terminals[0] != len(events) - 1:
        last = str(events[-1].source) if events else ""
        yield Failure(f"one of {', '.join(STREAM_ENDS)}, last", f"{len(terminals)} terminal events; "
                      f"last event {shown(types[-1]) if types else 'none'}", last)


def _item_events(events: list[TypedEvent]) -> Iterator[TypedEvent]:
    """Events that belong to an output item (everything but the response-level ones)."""
    for event in events:
        if event.type and event.type.startswith("response.") and event.type not in (
            "response.created", "response.in_progress", *TERMINAL_EVENTS
        ):
            yield event


@check("responses.stream.items_opened_before_parts", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="every event of an item comes between its `output_item.added` and `.done`",
       proven_by=("duplicate-output-index",))
def items_opened_before_parts(observed: Observed) -> Iterator[Failure]:
    # An event stack: the openai SDK's stream helper raises on a delta for an item it has not seen added.
    opened: dict[Any, str] = {}
    closed: set = set()
    for event in _item_events(_events(observed)):
        index = event.get("output_index")
        if event.type == "response.output_item.added":
            opened[index] = "open"
        elif index not in opened:
            yield Failure(f"response.output_item.added for output_index {index} first", f"{event.type} before it",
                          str(event.source))
            return
        elif index in closed:
            yield Failure(f"nothing for output_index {index} after its output_item.done", str(event.type),
                          str(event.source))
            return
        if event.type == "response.output_item.done":
            closed.add(index)
    unclosed = set(opened) - closed
    if unclosed:
        yield Failure("every added item done", f"output_index {sorted(unclosed, key=repr)} never done")


@check("responses.stream.indexes_consistent", level=Level.MUST, applies=responses_streamed,
       ref=OPEN_RESPONSES_SPEC, title="each output item has its own `output_index`, and its events agree on `item_id`",
       proven_by=("duplicate-output-index",))
def indexes_consistent(observed: Observed) -> Iterator[Failure]:
    item_at: dict[Any, Any] = {}
    for event in _item_events(_events(observed)):
        index = event.get("output_index")
        item_id = event.get("item", {}).get("id") if isinstance(event.get("item"), dict) else event.get("item_id")
        if event.type == "response.output_item.added" and index in item_at and item_at[index] != item_id:
            yield Failure(f"a new output_index for item {item_id!r}", f"output_index {index} again, "
                          f"already item {item_at[index]!r}", str(event.source))
            return
        if item_id is not None:
            if item_at.setdefault(index, item_id) != item_id:
                yield Failure(f"item_id {item_at[index]!r} at output_index {index}", f"item_id {item_id!r}",
                              str(event.source))
                return


def _final_items(observed: Observed) -> dict:
    response = final_response(observed)
    return {item.get("id"): item for item in response.get("output") or [] if isinstance(item, dict)}


@check("responses.stream.deltas_match_done", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="concatenated deltas equal the `.done` value and the final response",
       proven_by=("arguments-done-mismatch",))
def deltas_match_done(observed: Observed) -> Iterator[Failure]:
    # Clients show the deltas while they stream and store the final object: both must say the same thing.
    events = _events(observed)
    final = _final_items(observed)
    texts: dict[tuple, str] = {}
    arguments: dict[Any, str] = {}
    for event in events:
        key = (event.get("item_id"), event.get("content_index"))
        if event.type == "response.output_text.delta":
            texts[key] = texts.get(key, "") + str(event.get("delta", ""))
        elif event.type == "response.function_call_arguments.delta":
            arguments[event.get("item_id")] = arguments.get(event.get("item_id"), "") + str(event.get("delta", ""))
        elif event.type == "response.output_text.done" and texts.get(key, "") != event.get("text"):
            yield Failure(f"text {texts.get(key, '')[:120]!r} (the deltas)",
                          f"done says {shown(event.get('text'))}"[:200],
                          str(event.source))
        elif event.type == "response.function_call_arguments.done":
            item_id = event.get("item_id")
            # A call with no arguments may send no delta at all; then only done and the final object are compared.
            if item_id in arguments and arguments[item_id] != event.get("arguments"):
                yield Failure(f"arguments {arguments[item_id][:120]!r} (the deltas)",
                              f"done says {shown(event.get('arguments'))}"[:200], str(event.source))
            item = final.get(item_id)
            if item is not None and item.get("arguments") != event.get("arguments"):
                yield Failure(f"final arguments {shown(event.get('arguments'))} (as done)"[:200],
                              f"{shown(item.get('arguments'))}"[:200], str(event.source))


@check("responses.stream.item_ids_match_final", level=Level.MUST, applies=responses_streamed, ref=VLLM_STREAM_ITEM_IDS,
       title="each item's `id` and `call_id` in `response.output_item.done` are those of the terminal response",
       proven_by=("stream-item-ids-differ",))
def item_ids_match_final(observed: Observed) -> Iterator[Failure]:
    # Codex keys a call by the call_id it streamed and replays the terminal response's items (store: false): two ids
    # for one call leave its result answering a call the server never made.
    final = final_response(observed).get("output") or []
    for event in _events(observed):
        item, index = event.get("item"), event.get("output_index")
        if event.type != "response.output_item.done" or not isinstance(item, dict) or not isinstance(index, int) \
                or not 0 <= index < len(final) or not isinstance(final[index], dict):
            continue
        for key in ("id", "call_id"):
            if key in item and item.get(key) != final[index].get(key):
                yield Failure(f"{key} {shown(item.get(key))} at output[{index}] of the terminal response, as streamed",
                              f"{shown(final[index].get(key))}", str(event.source))


@check("responses.stream.silence_within_idle_limit", level=Level.MUST, applies=responses_long_prompt_stream,
       ref=CODEX_STREAM_IDLE_TIMEOUT,
       title="on a long prompt, no stretch without an event (before the first, between two) lasts Codex's stream "
             "idle timeout; an SSE comment line is no event",
       proven_by=("prefill-comment-keepalives",))
def silence_within_idle_limit(observed: Observed) -> Iterator[Failure | Note]:
    # Codex drops a stream that sends no event for its idle timeout and sends the whole prompt again: a prefill longer
    # than that, kept alive with comments, starts over for ever. The measurement is reported either way.
    observed.require_event_stream()
    silence = longest_silence(observed.exchange)
    limit = observed.target.stream_idle_limit_s
    measured = f"{silence.seconds:.2f} s without an event {silence.where}"
    if silence.seconds >= limit:
        yield Failure(f"an event at least every {limit:g} s (Codex's stream idle timeout; comment lines do not count)",
                      f"{measured}, {silence.kept_alive_by}; {silence.keep_alive_kind}",
                      observed.exchange.body_excerpt(300))
    else:
        yield Note(f"longest silence {measured} (Codex's idle limit: {limit:g} s); {silence.keep_alive_kind}")


@check("responses.stream.function_call_arguments_done", level=Level.SHOULD, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING,
       title="each streamed function call sends `response.function_call_arguments.done` before its item is done",
       proven_by=("arguments-done-missing",))
def function_call_arguments_done(observed: Observed) -> Iterator[Failure]:
    # SHOULD: OpenAI always sends it, and clients that run a tool as soon as its arguments are final wait for it;
    # the openai SDKs can fall back on `response.output_item.done`.
    finished_arguments = set()
    for event in _events(observed):
        if event.type == "response.function_call_arguments.done":
            finished_arguments.add(event.get("item_id"))
        elif event.type == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call" \
                    and item.get("id") not in finished_arguments:
                yield Failure(f"response.function_call_arguments.done for item {shown(item.get('id'))} first",
                              "response.output_item.done without it", str(event.source))
                return


@check("responses.stream.sequence_increasing", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="`sequence_number`, where present, strictly increases",
       proven_by=("sequence-not-increasing",))
def sequence_increasing(observed: Observed) -> Iterator[Failure]:
    previous = None
    for event in _events(observed):
        number = event.get("sequence_number")
        if isinstance(number, int):
            if previous is not None and number <= previous:
                yield Failure(f"a sequence_number above {previous}", str(number), str(event.source))
                return
            previous = number


@check("responses.stream.sequence_present", level=Level.SHOULD, applies=responses_streamed,
       ref=OPEN_RESPONSES_SCHEMAS, title="events carry `sequence_number`", proven_by=("sequence-number-missing",))
def sequence_present(observed: Observed) -> Iterator[Failure]:
    # SHOULD: OpenAI's events and Open Responses' schemas require it, and clients that reorder or resume a stream
    # need it; the openai SDKs and Zed read streams without it (llama.cpp omits it).
    missing = [event for event in _events(observed) if not isinstance(event.get("sequence_number"), int)]
    if missing:
        yield Failure("a sequence_number on every event", f"{len(missing)} events without one", str(missing[0].source))


@check("responses.stream.event_field_matches_type", level=Level.SHOULD, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="the SSE `event:` field, where sent, equals the data's `type`",
       proven_by=("event-field-mismatch",))
def event_field_matches_type(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the openai SDKs read data.type, but EventSource-style clients dispatch on the event field.
    for event in _events(observed):
        has_field = any(line.startswith(b"event:") for line in event.event.raw.splitlines())
        if has_field and event.event.event != event.type:
            yield Failure(f"event: {event.type}", f"event: {event.event.event}", str(event.source))
            return


_TEXT_EVENTS = ("response.output_text.", "response.content_part.")


@check("responses.stream.parts_nested", level=Level.MUST, applies=responses_streamed, ref=VLLM_EVENT_STACK,
       title="text events come between their part's `response.content_part.added` and `.done`",
       proven_by=("content-part-added-missing",))
def parts_nested(observed: Observed) -> Iterator[Failure]:
    # MUST: the openai SDK's stream helper files a text delta under a part it must have seen added (IndexError
    # otherwise); vLLM's event-stack validator requires every part closed after its text, before its item.
    open_parts: set = set()
    for event in _events(observed):
        kind = event.type or ""
        key = (event.get("item_id"), event.get("content_index"))
        if kind == "response.content_part.added":
            open_parts.add(key)
        elif kind.startswith("response.output_text.") or kind == "response.content_part.done":
            if key not in open_parts:
                yield Failure(f"response.content_part.added for item {key[0]!r}, part {key[1]!r} first",
                              f"{kind} outside an open part", str(event.source))
                return
            if kind == "response.content_part.done":
                open_parts.discard(key)
        elif kind == "response.output_item.done":
            item = event.get("item") if isinstance(event.get("item"), dict) else {}
            if any(item_id == item.get("id") for item_id, _ in open_parts):
                yield Failure("its parts done before the item", "response.output_item.done with a part still open",
                              str(event.source))
                return


@check("responses.stream.text_event_indexes", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_PYTHON_RESPONSES_HELPER,
       title="text and content-part events carry `item_id`, `output_index` and `content_index`",
       proven_by=("event-item-id-missing",))
def text_event_indexes(observed: Observed) -> Iterator[Failure]:
    # MUST: the openai SDK's stream helper looks the part up by output_index and content_index: without them it
    # raises (RuntimeError, TypeError), as on llama.cpp's llama-server.
    for event in _events(observed):
        if not (event.type or "").startswith(_TEXT_EVENTS):
            continue
        wrong = [name for name, kind in (("item_id", str), ("output_index", int), ("content_index", int))
                 if not isinstance(event.get(name), kind) or isinstance(event.get(name), bool)]
        if wrong:
            yield Failure("item_id, output_index and content_index", f"{event.type} without {', '.join(wrong)}",
                          str(event.source))
            return


@check("responses.stream.text_delta_logprobs", level=Level.SHOULD, applies=responses_streamed,
       ref=OPEN_RESPONSES_SCHEMAS, title="`response.output_text.delta` events carry a `logprobs` list",
       proven_by=("delta-logprobs-missing",))
def text_delta_logprobs(observed: Observed) -> Iterator[Failure]:
    # SHOULD: OpenAI sends it (empty unless asked) and Open Responses' schema requires it; the openai SDKs read
    # deltas without it.
    for event in _events(observed):
        if event.type == "response.output_text.delta" and not isinstance(event.get("logprobs"), list):
            yield Failure('"logprobs": [] on every text delta', "a delta without it", str(event.source))
            return
