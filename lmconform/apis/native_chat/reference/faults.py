"""The faults of `POST /api/v1/chat`, LM Studio's own chat API: its stored chats, its result and the event stream
that carries it. No other server here speaks this API, so each fault is a deviation from LM Studio's docs rather
than a defect seen in a release; each says whether it shows in the stream, the result, or both.
"""

from __future__ import annotations

import json
from typing import Any

from lmconform.apis.native_chat.reference import stages
from lmconform.reference.faults.registry import fault, flag

Event = dict[str, Any]
Frame = tuple[str, Event]
SOURCE = "deviations from LM Studio's REST docs (its chat and streaming-events pages)"

CHAIN_IGNORED = flag(
    "native-chain-ignored", api="native_chat",
    summary="`previous_response_id` is accepted, but the model sees only this request's input",
    seen_in="stateless servers that accept the field")


@fault("native-previous-id-refused", stages.REQUEST, api="native_chat",
       summary="every `previous_response_id` is answered as unknown (HTTP 400): stored chats cannot be continued",
       seen_in="servers that ignore `store`")
def previous_id_refused(body: Any) -> Any:
    if isinstance(body, dict) and "previous_response_id" in body:
        return {**body, "previous_response_id": "resp_forgotten"}
    return body


@fault("native-stats-missing", stages.RESULT, api="native_chat",
       summary="the result has no `stats` (stream and non-stream)",
       seen_in=SOURCE)
def stats_missing(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "stats"}


@fault("native-response-id-missing", stages.RESULT, api="native_chat",
       summary="a stored chat's result has no `response_id` to continue from (stream and non-stream)",
       seen_in=SOURCE)
def response_id_missing(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "response_id"}


@fault("native-provider-info-missing", stages.RESULT, api="native_chat",
       summary="tool calls name no `provider_info`: neither the result's tool_call items nor the tool_call events "
               "(stream and non-stream)",
       seen_in=SOURCE)
def provider_info_missing(result: dict[str, Any]) -> dict[str, Any]:
    output = [{key: value for key, value in item.items() if key != "provider_info"} if item.get("type") == "tool_call"
              else item for item in result["output"]]
    return {**result, "output": output}


@fault("native-no-chat-end", stages.EVENTS, api="native_chat",
       summary="the stream ends without `chat.end` (stream only)",
       seen_in=SOURCE)
def no_chat_end(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "chat.end"]


@fault("native-message-end-missing", stages.EVENTS, api="native_chat",
       summary="the message phase is never closed: no `message.end` (stream only)",
       seen_in=SOURCE)
def message_end_missing(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "message.end"]


@fault("native-tool-arguments-string", stages.EVENTS, api="native_chat",
       summary="`tool_call.arguments` carries the arguments as a JSON string, not an object (stream only)",
       seen_in=SOURCE)
def tool_arguments_string(events: list[Event]) -> list[Event]:
    return [{**event, "arguments": json.dumps(event["arguments"])} if event["type"] == "tool_call.arguments"
            else event for event in events]


@fault("native-tool-success-missing", stages.EVENTS, api="native_chat",
       summary="a tool call is never concluded: no `tool_call.success` (stream only)",
       seen_in=SOURCE)
def tool_success_missing(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "tool_call.success"]


@fault("native-result-differs", stages.EVENTS, api="native_chat",
       summary="the message `chat.end` carries is not the one the deltas spelled out (stream only)",
       seen_in=SOURCE)
def result_differs(events: list[Event]) -> list[Event]:
    def edited(event: Event) -> Event:
        if event["type"] != "chat.end":
            return event
        output = [{**item, "content": item["content"] + " (edited)"} if item.get("type") == "message" else item
                  for item in event["result"]["output"]]
        return {**event, "result": {**event["result"], "output": output}}

    return [edited(event) for event in events]


@fault("native-instance-id-mismatch", stages.EVENTS, api="native_chat",
       summary="`chat.start` names another `model_instance_id` than the result (stream only)",
       seen_in=SOURCE)
def instance_id_mismatch(events: list[Event]) -> list[Event]:
    return [{**event, "model_instance_id": "another-instance"} if event["type"] == "chat.start" else event
            for event in events]


@fault("native-progress-out-of-range", stages.EVENTS, api="native_chat",
       summary="`prompt_processing.progress` counts in percent (50, 100), not from 0 to 1 (stream only)",
       seen_in=SOURCE)
def progress_out_of_range(events: list[Event]) -> list[Event]:
    return [{**event, "progress": event["progress"] * 100} if event["type"].endswith(".progress") else event
            for event in events]


@fault("native-event-name-mismatch", stages.FRAMES, api="native_chat",
       summary="the SSE `event:` line of every delta says `delta` instead of the data's `type` (stream only)",
       seen_in=SOURCE)
def event_name_mismatch(frames: list[Frame]) -> list[Frame]:
    return [("delta" if data["type"].endswith(".delta") else name, data) for name, data in frames]


@fault("native-reasoning-in-message", stages.RESULT, api="native_chat",
       summary="the reasoning comes as `<think>…</think>` at the start of the message item, with no reasoning item "
               "(stream and non-stream)",
       seen_in="servers whose model's template has no reasoning parser on this route")
def reasoning_in_message(result: dict[str, Any]) -> dict[str, Any]:
    thoughts = [item["content"] for item in result["output"] if item.get("type") == "reasoning"]
    if not thoughts:
        return result
    output = [{**item, "content": f"<think>{' '.join(thoughts)}</think>{item['content']}"}
              if item.get("type") == "message" else item for item in result["output"] if item.get("type") != "reasoning"]
    return {**result, "output": output}
