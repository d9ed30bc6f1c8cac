"""The faults of `POST /v1/responses`: its validation, its stored conversations and its event stream.

Six of them are flags rather than functions, because they change what the server does, not what it renders:
the four about chains decide which stored conversation a turn continues (lmconform.apis.responses.reference.door), and the
two about validation add a rule at one point of Zod's order of issues, which decides the error a request gets
when it has several (lmconform.apis.responses.reference.validation).
"""

from __future__ import annotations

import json
from typing import Any

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.registry import fault, flag
from lmconform.reference.model import arguments_json

Event = dict[str, Any]
Frame = tuple[str, Event]  # the name an event's SSE `event:` line gives it, and its data


def is_nested_tool(tool: Any) -> bool:
    """A tool in the chat form, `{"type": "function", "function": {...}}`."""
    return isinstance(tool, dict) and "function" in tool


def _with_extra_key(arguments: str) -> str:
    return arguments_json({**json.loads(arguments), "extra": True})


def _item_with_extra_key(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "arguments": _with_extra_key(item["arguments"])} if item["type"] == "function_call" else item


@fault("nested-tools-accepted", stages.REQUEST, api="responses",
       summary="Responses tools in the chat form `{type, function: {...}}` are accepted without error, then "
               "dropped: neither the model nor the echoed `tools` has them",
       seen_in="servers that ignore the tool keys they do not know")
def nested_tools_dropped(body: Any) -> Any:
    # Dropped before validation could reject them or the model could see them.
    if isinstance(body, dict) and isinstance(body.get("tools"), list):
        return {**body, "tools": [tool for tool in body["tools"] if not is_nested_tool(tool)]}
    return body


FLATTENED_TOOLS_REJECTED = flag(
    "flattened-tools-rejected", api="responses",
    summary='flattened Responses tools are rejected as if nested: 400 "Required" at `tools.<i>.function`',
    seen_in="servers that validate Responses tools with the chat schema")

# The generated chains (responses/fuzz-chains) find the chaining defects on their own too: the same chain checks
# fail on them as on the written chain cases.
CHAIN_IGNORED = flag(
    "chain-ignored", api="responses",
    summary="`previous_response_id` is checked and echoed, but the model and the token count see only this "
            "request's input",
    seen_in="stateless servers that accept the field")

UNKNOWN_PREVIOUS_200 = flag(
    "unknown-previous-200", api="responses",
    summary="an unknown `previous_response_id` is answered 200 as a fresh conversation (the id is still echoed)",
    seen_in="servers that treat a missing chain as none")

UNKNOWN_PREVIOUS_404 = flag(
    "unknown-previous-404", api="responses",
    summary="an unknown `previous_response_id` gets HTTP 404 with the `previous_response_not_found` body",
    seen_in="servers that answer a missing chain as a missing resource")


@fault("previous-id-echo-wrong", stages.OBJECT, api="responses",
       summary="the response's `previous_response_id` is null even when one was given; the chain still works "
               "(stream and non-stream)",
       seen_in="servers that do not echo the field")
def previous_id_not_echoed(response: dict[str, Any]) -> dict[str, Any]:
    return {**response, "previous_response_id": None}


FORK_SHARES_STATE = flag(
    "fork-shares-state", api="responses",
    summary="history is kept per chain root, not per response: a reply to P continues from the chain's newest "
            "turn, so it sees the turns of P's earlier children too (one mutable thread)",
    seen_in="servers that keep one mutable thread per conversation")

FUNCTION_CALL_OUTPUT_REJECTED = flag(
    "function-call-output-rejected", api="responses",
    summary="`function_call_output` input items get a 400 error at `input`",
    seen_in="servers without tool results in the Responses API")


@fault("call-id-missing", stages.OBJECT, api="responses",
       summary="`function_call` output items have no `call_id` (stream and non-stream)",
       seen_in="servers that map chat tool calls to Responses items by hand")
def call_id_missing(response: dict[str, Any]) -> dict[str, Any]:
    output = [{key: value for key, value in item.items() if key != "call_id"} for item in response["output"]]
    return {**response, "output": output}


# The delta sent before its item is lost to every reader that needs the item first, the normaliser included.
@fault("events-out-of-order", stages.EVENTS, api="responses",
       summary="the first delta of the first output item comes before its `response.output_item.added` "
               "(stream only)",
       seen_in="hand-written Responses encoders")
def events_out_of_order(events: list[Event]) -> list[Event]:
    first_delta = next(i for i, event in enumerate(events) if event["type"].endswith(".delta"))
    moved = list(events)
    moved.insert(2, moved.pop(first_delta))  # before the first response.output_item.added
    return moved


@fault("no-response-completed", stages.EVENTS, api="responses",
       summary="the stream ends without `response.completed` (stream only)",
       seen_in="servers that end the stream at the last item")
def no_response_completed(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "response.completed"]


@fault("arguments-done-mismatch", stages.EVENTS, api="responses",
       summary="`response.function_call_arguments.done` and the finished item carry one more key than the "
               "concatenated deltas (stream only)",
       seen_in="servers that re-serialise the parsed arguments at the end")
def arguments_done_mismatch(events: list[Event]) -> list[Event]:
    def finished(event: Event) -> Event:
        if event["type"] == "response.function_call_arguments.done":
            return {**event, "arguments": _with_extra_key(event["arguments"])}
        if event["type"] == "response.output_item.done":
            return {**event, "item": _item_with_extra_key(event["item"])}
        if event["type"] == "response.completed":
            output = [_item_with_extra_key(item) for item in event["response"]["output"]]
            return {**event, "response": {**event["response"], "output": output}}
        return event

    return [finished(event) for event in events]


@fault("stream-item-ids-differ", stages.EVENTS, api="responses",
       summary="the terminal event's response gives each output item another `id`, and each call another `call_id`, "
               "than its `response.output_item.done` (stream only)",
       seen_in="vllm PR #56285 (ids made again when the final response is built)")
def stream_item_ids_differ(events: list[Event]) -> list[Event]:
    def renamed(item: dict[str, Any]) -> dict[str, Any]:
        again: dict[str, str] = {key: f"{item[key]}_final" for key in ("id", "call_id") if key in item}
        return {**item, **again}

    return [{**event, "response": {**event["response"], "output": [renamed(item) for item in event["response"]["output"]]}}
            if event["type"] in ("response.completed", "response.incomplete") else event for event in events]


@fault("arguments-done-missing", stages.EVENTS, api="responses",
       summary="function calls stream their argument deltas but no `response.function_call_arguments.done` "
               "(stream only)",
       seen_in="llama.cpp's llama-server")
def arguments_done_missing(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "response.function_call_arguments.done"]


@fault("duplicate-output-index", stages.EVENTS, api="responses",
       summary="the second output item reuses `output_index` 0; with a single item nothing changes (stream only)",
       seen_in="servers that number content, not items (openai-python rejects it)")
def duplicate_output_index(events: list[Event]) -> list[Event]:
    return [{**event, "output_index": 0} if event.get("output_index") == 1 else event for event in events]


@fault("sequence-not-increasing", stages.FRAMES, api="responses",
       summary="the third event repeats the `sequence_number` of the second (stream only)",
       seen_in="servers that number events per item")
def sequence_not_increasing(frames: list[Frame]) -> list[Frame]:
    (_, second), (name, third) = frames[1:3]
    return [*frames[:2], (name, {**third, "sequence_number": second["sequence_number"]}), *frames[3:]]


@fault("sequence-number-missing", stages.FRAMES, api="responses",
       summary="events carry no `sequence_number` (stream only)",
       seen_in="llama.cpp's server")
def sequence_number_missing(frames: list[Frame]) -> list[Frame]:
    return [(name, {key: value for key, value in data.items() if key != "sequence_number"}) for name, data in frames]


@fault("event-field-mismatch", stages.FRAMES, api="responses",
       summary="the SSE `event:` line of every delta event says `message` instead of the data's `type` "
               "(stream only)",
       seen_in="generic SSE encoders with a fixed event name")
def event_field_mismatch(frames: list[Frame]) -> list[Frame]:
    return [("message" if data["type"].endswith(".delta") else name, data) for name, data in frames]

