"""Faults that change one member of one kind of Responses object, each failing the `schema.*` check of the level
its schema gives that member: the response object, its stream events and its error object.
"""

from __future__ import annotations

from typing import Any

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.edits import without, without_nulls
from lmconform.reference.faults.registry import fault

JsonObject = dict[str, Any]


@fault("response-output-missing", stages.BODY, api="responses",
       summary="the response object of a non-stream answer has no `output` (non-stream only)",
       seen_in="servers that return only `output_text`")
def response_output_missing(response: JsonObject) -> JsonObject:
    return without(response, "output")

@fault("event-item-id-missing", stages.EVENTS, api="responses",
       summary="the events of an item's content (parts, deltas, what is done) carry no `item_id` (stream only)",
       seen_in="hand-written Responses encoders")
def event_item_id_missing(events: list[JsonObject]) -> list[JsonObject]:
    return [without(event, "item_id") for event in events]

@fault("usage-details-missing", stages.OBJECT, api="responses",
       summary="the response's `usage` has no `input_tokens_details` (stream and non-stream)",
       seen_in="LM Studio 0.3.29 (lmstudio-bug-tracker#1174)")
def usage_details_missing(response: JsonObject) -> JsonObject:
    return {**response, "usage": without(response["usage"], "input_tokens_details")}

@fault("response-null-members-omitted", stages.OBJECT, api="responses",
       summary="the response object leaves out its null members (`error`, `incomplete_details`, `instructions`, "
               "`previous_response_id`…) (stream and non-stream)",
       seen_in="LM Studio 0.3.29 (lmstudio-bug-tracker#1174), servers that serialise with exclude_none")
def response_nulls_omitted(response: JsonObject) -> JsonObject:
    return without_nulls(response)

@fault("error-message-missing", stages.ERROR, api="responses",
       summary="the error object of a refused Responses request has no `message`",
       seen_in="servers that report only an error code")
def error_message_missing(error: JsonObject) -> JsonObject:
    return without(error, "message")

@fault("error-type-missing", stages.ERROR, api="responses",
       summary="the error object of a refused Responses request has no `type`",
       seen_in="servers that build error objects by hand")
def error_type_missing(error: JsonObject) -> JsonObject:
    return without(error, "type")

@fault("error-param-missing", stages.ERROR, api="responses",
       summary="the error object of a refused Responses request has no `param`",
       seen_in="llama.cpp's server (its errors carry code, message and type)")
def error_param_missing(error: JsonObject) -> JsonObject:
    return without(error, "param")
