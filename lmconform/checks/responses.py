"""`/v1/responses`: flattened tools, chaining with previous_response_id, and the event grammar of the stream."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from typing import Any

from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    LMSTUDIO_CHAIN_NOT_FOUND,
    LMSTUDIO_NESTED_TOOLS,
    LMSTUDIO_RESPONSES,
    OPEN_RESPONSES_SPEC,
    OPENAI_RESPONSES_CREATE,
    OPENAI_RESPONSES_STREAMING,
)
from lmconform.checks.registry import check
from lmconform.checks.scope import (
    responses_answer,
    responses_chain,
    responses_flattened_tools,
    responses_function_call_output,
    responses_fuzz_chains,
    responses_nested_tools,
    responses_recall,
    responses_streamed,
    responses_unknown_previous,
)
from lmconform.fuzz.chains import describe, fuzz_chains
from lmconform.normalize.responses import TERMINAL_EVENTS, ResponsesEvent, response_object
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, Requirement, Unsupported
from lmconform.wire.http import HttpExchange

# --- tools --------------------------------------------------------------------------------------------------------


def _function_calls(response: Any) -> list[dict]:
    output = response.get("output") if isinstance(response, dict) else None
    return [item for item in output or [] if isinstance(item, dict) and item.get("type") == "function_call"]


@check("responses.tools.flattened_accepted", level=Level.MUST, applies=responses_flattened_tools,
       ref=LMSTUDIO_RESPONSES, title="flattened function tools are accepted and called")
def flattened_accepted(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    if not observed.succeeded:
        yield Failure("2xx for flattened tools", f"HTTP {exchange.status}", exchange.body_excerpt())
    elif not _function_calls(observed.response_object):
        yield Failure("a function_call output item", "none", exchange.body_excerpt(400))


@check("responses.function_call.item_complete", level=Level.MUST, applies=responses_answer, ref=OPENAI_RESPONSES_CREATE,
       title="a function_call item carries `call_id`, `name` and string `arguments`")
def function_call_item_complete(observed: Observed) -> Iterator[Failure]:
    # The next turn answers a call by its call_id; without it the result cannot be sent back.
    observed.require_success()
    calls = _function_calls(observed.response_object)
    if not calls:
        raise NotApplicable("the answer has no function_call item")
    for item in calls:
        missing = [key for key in ("call_id", "name") if not isinstance(item.get(key), str) or not item[key]]
        if not isinstance(item.get("arguments"), str):
            missing.append("arguments (string)")
        if missing:
            yield Failure("call_id, name and arguments", f"missing {', '.join(missing)}", json.dumps(item)[:400])


def _error_object(exchange: HttpExchange) -> dict:
    body = exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


@check("responses.tools.nested_rejected_or_honoured", level=Level.MUST, applies=responses_nested_tools,
       ref=LMSTUDIO_RESPONSES, title="chat-form (nested) tools are refused naming the param, or honoured fully")
def nested_rejected_or_honoured(observed: Observed) -> Iterator[Failure | Note]:
    exchange = observed.exchange
    status = exchange.status or 0
    if 400 <= status < 500:
        param = _error_object(exchange).get("param")
        if isinstance(param, str) and param.startswith("tools"):
            yield Note(f"refused: HTTP {status}, param {param!r}")
        else:
            yield Failure("a 4xx error naming the tools param", f"HTTP {status}, param {param!r}", exchange.body_excerpt())
    elif not observed.succeeded:
        yield Failure("a 4xx refusal or a function call", f"HTTP {status}", exchange.body_excerpt())
    elif _function_calls(observed.response_object):
        yield Note("honoured: the nested tools were called")
    else:
        yield Failure("a 4xx refusal, or a call to the tool", "HTTP 200 without a function call: tools silently ignored",
                      exchange.body_excerpt(400))


@check("responses.tools.nested_error_is_lmstudio_zod", level=Level.MUST, applies=responses_nested_tools,
       requires=[Requirement.LMSTUDIO_PROFILE], ref=LMSTUDIO_NESTED_TOOLS,
       title='LM Studio refuses nested tools with "Required" at param "tools.0.name"')
def nested_error_is_lmstudio_zod(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    error = _error_object(exchange)
    seen = (exchange.status, error.get("message"), error.get("param"), error.get("code"))
    wanted = (400, "Required", "tools.0.name", "invalid_type")
    if seen != wanted:
        yield Failure("HTTP 400, message 'Required', param 'tools.0.name', code 'invalid_type'",
                      "HTTP {}, message {!r}, param {!r}, code {!r}".format(*seen), exchange.body_excerpt())


# --- chaining -----------------------------------------------------------------------------------------------------


def _response_id(observed: Observed) -> str:
    observed.require_success()
    response = observed.response_object
    if not isinstance(response, dict) or not isinstance(response.get("id"), str):
        raise NotApplicable("the first response has no id to chain from")
    return response["id"]


def _turn(observed: Observed, key: str, input_: Any, chained: bool = True) -> HttpExchange:
    """Send a further turn of the case: its body with another input, chained to the first response or not."""
    body = {k: v for k, v in observed.request_body.items() if k not in ("input", "previous_response_id")}
    body["input"] = input_
    if chained:
        body["previous_response_id"] = _response_id(observed)
    return observed.follow_up(key, body)


def _answered(exchange: HttpExchange, what: str) -> dict:
    if exchange.error or not exchange.status or not 200 <= exchange.status < 300:
        raise _FollowUpFailed(Failure(f"{what} answered 2xx", f"HTTP {exchange.status} {exchange.error or ''}".strip(),
                                      f"{exchange.body_excerpt(300)}\nReproduce: {exchange.request.curl()}"))
    return response_object(exchange)


class _FollowUpFailed(Exception):
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


def _follow_up_failure_is_the_finding(check_function: Callable[[Observed], Iterator[Failure]]):
    """A chain check whose further turn was refused or broke reports that turn as its failure."""
    @functools.wraps(check_function)
    def checked(observed: Observed) -> Iterator[Failure]:
        try:
            yield from check_function(observed)
        except _FollowUpFailed as failed:
            yield failed.failure
    return checked


def _input_tokens(response: dict) -> int | None:
    usage = response.get("usage")
    tokens = usage.get("input_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) else None


@check("responses.chain.previous_id_echoed", level=Level.MUST, applies=responses_chain, ref=OPENAI_RESPONSES_CREATE,
       title="a chained response echoes the `previous_response_id` it was given")
@_follow_up_failure_is_the_finding
def previous_id_echoed(observed: Observed) -> Iterator[Failure]:
    parent = _response_id(observed)
    chained = _answered(_turn(observed, "chained", observed.case.follow_up["input"]), "the chained turn")
    if chained.get("previous_response_id") != parent:
        yield Failure(f"previous_response_id {parent!r}", f"{chained.get('previous_response_id')!r}",
                      json.dumps({k: chained.get(k) for k in ("id", "previous_response_id")}))


@check("responses.chain.history_used", level=Level.MUST, applies=responses_chain, ref=LMSTUDIO_RESPONSES,
       title="a chained turn is answered with the earlier turns in context (more input tokens than alone)")
@_follow_up_failure_is_the_finding
def history_used(observed: Observed) -> Iterator[Failure]:
    # Proof without trusting the model: the same input costs more input tokens when the history is prepended.
    follow_up = observed.case.follow_up["input"]
    chained = _answered(_turn(observed, "chained", follow_up), "the chained turn")
    alone = _answered(_turn(observed, "unchained", follow_up, chained=False), "the same turn unchained")
    with_history, without = _input_tokens(chained), _input_tokens(alone)
    if with_history is None or without is None:
        raise Unsupported("the target reports no usage.input_tokens, so the history cannot be measured")
    if with_history <= without:
        yield Failure(f"more than {without} input tokens (the same input sent alone)",
                      f"{with_history} input tokens with previous_response_id: the history was dropped",
                      f"Reproduce: {observed.follow_up('chained', None).request.curl()}")


@check("responses.chain.recall_answered", level=Level.MUST, applies=responses_recall, ref=LMSTUDIO_RESPONSES,
       requires=[Requirement.REFERENCE_PROFILE],
       title="the reference model answers a recall question from the chained history")
@_follow_up_failure_is_the_finding
def recall_answered(observed: Observed) -> Iterator[Failure]:
    # Only the deterministic reference model can be held to an answer; real models are judged by history_used.
    word = observed.case.follow_up["recall"]
    chained = _answered(_turn(observed, "chained", observed.case.follow_up["input"]), "the chained turn")
    text = " ".join(part.get("text", "") for item in chained.get("output") or [] if isinstance(item, dict)
                    for part in item.get("content") or [] if isinstance(part, dict))
    if word not in text:
        yield Failure(f"an answer containing {word!r}", repr(text[:200]),
                      f"Reproduce: {observed.follow_up('chained', None).request.curl()}")


@check("responses.chain.fork_independent", level=Level.MUST, applies=responses_chain, ref=OPENAI_RESPONSES_CREATE,
       title="two children of one response do not see each other (a fork, not a shared thread)")
@_follow_up_failure_is_the_finding
def fork_independent(observed: Observed) -> Iterator[Failure]:
    follow_up = observed.case.follow_up["input"]
    sibling_input = "An unrelated sibling turn whose words must not reach any other child of the same parent."
    first = _answered(_turn(observed, "chained", follow_up), "the first child")
    _answered(_turn(observed, "sibling", sibling_input), "a sibling child")
    again = _answered(_turn(observed, "chained-again", follow_up), "the first child's input again")
    before, after = _input_tokens(first), _input_tokens(again)
    if before is None or after is None:
        raise Unsupported("the target reports no usage.input_tokens, so a fork cannot be measured")
    if after != before:
        yield Failure(f"{before} input tokens, as for the same child before its sibling existed",
                      f"{after} input tokens: the sibling's turn leaked into this child",
                      f"Reproduce: {observed.follow_up('chained-again', None).request.curl()}")


@check("responses.chain.function_call_output_round_trip", level=Level.MUST, applies=responses_function_call_output,
       ref=OPENAI_RESPONSES_CREATE, title="a function_call_output answering the call's call_id continues the chain")
@_follow_up_failure_is_the_finding
def function_call_output_round_trip(observed: Observed) -> Iterator[Failure]:
    observed.require_success()
    calls = _function_calls(observed.response_object)
    if not calls or not isinstance(calls[0].get("call_id"), str):
        raise NotApplicable("the first response has no function call with a call_id to answer")
    output = {"type": "function_call_output", "call_id": calls[0]["call_id"],
              "output": observed.case.follow_up["function_call_output"]}
    answer = _answered(_turn(observed, "tool-output", [output]), "the function_call_output turn")
    if answer.get("status") not in (None, "completed") or not answer.get("output"):
        yield Failure("a completed response with output", f"status {answer.get('status')!r}, "
                      f"{len(answer.get('output') or [])} output items", json.dumps(answer)[:400])


@check("responses.chain.unknown_id_not_accepted", level=Level.MUST, applies=responses_unknown_previous,
       ref=LMSTUDIO_CHAIN_NOT_FOUND, title="an unknown previous_response_id is refused, never answered without history")
def unknown_id_not_accepted(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    if not 400 <= (exchange.status or 0) < 500:
        yield Failure("a 4xx error", f"HTTP {exchange.status}: the history was silently dropped"
                      if observed.succeeded else f"HTTP {exchange.status}", exchange.body_excerpt())
    elif not isinstance(_error_object(exchange).get("message"), str):
        yield Failure('an OpenAI error object {"error": {"message", ...}}', exchange.content_type or "untyped",
                      exchange.body_excerpt())


@check("responses.chain.unknown_id_is_400_not_found", level=Level.SHOULD, applies=responses_unknown_previous,
       ref=LMSTUDIO_CHAIN_NOT_FOUND, title="an unknown previous_response_id gets 400 `previous_response_not_found`")
def unknown_id_is_400_not_found(observed: Observed) -> Iterator[Failure]:
    # SHOULD: OpenAI answers 400 with this code; 404 is a defensible reading that clients may not expect.
    exchange = observed.exchange
    code = _error_object(exchange).get("code")
    if exchange.status != 400 or code != "previous_response_not_found":
        yield Failure("HTTP 400, code 'previous_response_not_found'", f"HTTP {exchange.status}, code {code!r}",
                      exchange.body_excerpt())


# --- the event stream ---------------------------------------------------------------------------------------------


def _events(observed: Observed) -> list[ResponsesEvent]:
    return observed.require_responses_stream().events


@check("responses.stream.lifecycle", level=Level.MUST, applies=responses_streamed, ref=OPENAI_RESPONSES_STREAMING,
       title="`response.created` comes first and once; one terminal event comes last")
def lifecycle(observed: Observed) -> Iterator[Failure]:
    events = _events(observed)
    types = [event.type for event in events]
    if not events or types[0] != "response.created":
        yield Failure("response.created first", f"{types[0] if types else 'no events'}",
                      str(events[0].source) if events else "")
    if types.count("response.created") > 1:
        yield Failure("response.created once", f"{types.count('response.created')} times")
    terminals = [i for i, kind in enumerate(types) if kind in TERMINAL_EVENTS]
    if len(terminals) != 1 or terminals[0] != len(events) - 1:
        last = str(events[-1].source) if events else ""
        yield Failure(f"one of {', '.join(TERMINAL_EVENTS)}, last", f"{len(terminals)} terminal events; "
                      f"last event {types[-1] if types else None!r}", last)


def _item_events(events: list[ResponsesEvent]) -> Iterator[ResponsesEvent]:
    """Events that belong to an output item (everything but the response-level ones)."""
    for event in events:
        if event.type and event.type.startswith("response.") and event.type not in (
            "response.created", "response.in_progress", *TERMINAL_EVENTS
        ):
            yield event


@check("responses.stream.items_opened_before_parts", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="every event of an item comes between its `output_item.added` and `.done`")
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
            yield Failure(f"nothing for output_index {index} after its output_item.done", event.type, str(event.source))
            return
        if event.type == "response.output_item.done":
            closed.add(index)
    unclosed = set(opened) - closed
    if unclosed:
        yield Failure("every added item done", f"output_index {sorted(unclosed, key=repr)} never done")


@check("responses.stream.indexes_consistent", level=Level.MUST, applies=responses_streamed,
       ref=OPEN_RESPONSES_SPEC, title="each output item has its own `output_index`, and its events agree on `item_id`")
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
    response = observed.response_object
    return {item.get("id"): item for item in response.get("output") or [] if isinstance(item, dict)}


@check("responses.stream.deltas_match_done", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="concatenated deltas equal the `.done` value and the final response")
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
            yield Failure(f"text {texts.get(key, '')[:120]!r} (the deltas)", f"done says {event.get('text')!r}"[:200],
                          str(event.source))
        elif event.type == "response.function_call_arguments.done":
            item_id = event.get("item_id")
            # A call with no arguments may send no delta at all; then only done and the final object are compared.
            if item_id in arguments and arguments[item_id] != event.get("arguments"):
                yield Failure(f"arguments {arguments[item_id][:120]!r} (the deltas)",
                              f"done says {event.get('arguments')!r}"[:200], str(event.source))
            item = final.get(item_id)
            if item is not None and item.get("arguments") != event.get("arguments"):
                yield Failure(f"final arguments {event.get('arguments')!r} (as done)"[:200],
                              f"{item.get('arguments')!r}"[:200], str(event.source))


@check("responses.stream.function_call_arguments_done", level=Level.SHOULD, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING,
       title="each streamed function call sends `response.function_call_arguments.done` before its item is done")
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
                yield Failure(f"response.function_call_arguments.done for item {item.get('id')!r} first",
                              "response.output_item.done without it", str(event.source))
                return


@check("responses.stream.sequence_increasing", level=Level.MUST, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="`sequence_number`, where present, strictly increases")
def sequence_increasing(observed: Observed) -> Iterator[Failure]:
    previous = None
    for event in _events(observed):
        number = event.get("sequence_number")
        if isinstance(number, int):
            if previous is not None and number <= previous:
                yield Failure(f"a sequence_number above {previous}", str(number), str(event.source))
                return
            previous = number


@check("responses.stream.sequence_present", level=Level.INFO, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="events carry `sequence_number`")
def sequence_present(observed: Observed) -> Iterator[Failure]:
    # INFO: optional in practice (llama.cpp omits it); clients that reorder or resume need it.
    missing = [event for event in _events(observed) if not isinstance(event.get("sequence_number"), int)]
    if missing:
        yield Failure("a sequence_number on every event", f"{len(missing)} events without one", str(missing[0].source))


@check("responses.stream.event_field_matches_type", level=Level.SHOULD, applies=responses_streamed,
       ref=OPENAI_RESPONSES_STREAMING, title="the SSE `event:` field, where sent, equals the data's `type`")
def event_field_matches_type(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the openai SDKs read data.type, but EventSource-style clients dispatch on the event field.
    for event in _events(observed):
        has_field = any(line.startswith(b"event:") for line in event.event.raw.splitlines())
        if has_field and event.event.event != event.type:
            yield Failure(f"event: {event.type}", f"event: {event.event.event}", str(event.source))
            return


@check("responses.fuzz.chain_invariants", level=Level.MUST, applies=responses_fuzz_chains, ref=OPENAI_RESPONSES_CREATE,
       title="generated chains, forks and unknown ids keep every chaining invariant")
def chain_invariants(observed: Observed) -> Iterator[Failure]:
    if observed.target.fuzz_examples <= 0:
        raise NotApplicable("fuzzing is off (--fuzz-examples 0)")
    observed.require_success()
    # The run's model, output cap and temperature go into every generated request, as into the case's own.
    base = {k: v for k, v in observed.request_body.items()
            if k in ("model", "stream", "max_output_tokens", "temperature")}

    def send(body: dict) -> HttpExchange:
        return observed.send("POST", observed.case.path, {**base, **body})

    finding = fuzz_chains(send, base.get("model"), observed.target.fuzz_examples)
    if finding is not None:
        yield Failure("every invariant to hold", finding.invariant, describe(finding))
