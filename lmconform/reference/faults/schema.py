"""The faults that prove the schema checks: each changes one member of one kind of object — its JSON type, or
whether it is there at all — so that the schema of that object fails at the level it grades the member, and
whatever else reads the member fails with it.

Each is named after what it breaks and was seen in a real server or one of its kind, as `seen_in` says.
"""

from __future__ import annotations

from typing import Any

from lmconform.reference.faults.registry import Stage, fault

JsonObject = dict[str, Any]


def _without(mapping: JsonObject, *keys: str) -> JsonObject:
    return {key: value for key, value in mapping.items() if key not in keys}


def _without_nulls(value: Any) -> Any:
    """`value` with every member whose value is null left out, at every depth, as serialisers that skip None do."""
    if isinstance(value, dict):
        return {key: _without_nulls(member) for key, member in value.items() if member is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


# --- chat completions: each chunk of a stream and the non-stream body ----------------------------------------------

@fault("created-not-integer", Stage.CHAT_OBJECT, api="chat",
       summary="`created` is a string of digits instead of an integer (stream and non-stream)",
       seen_in="servers that format the timestamp as text",
       findings={"schema.chat.chunk.should", "schema.chat.completion.should", "chat.stream.chunk.required_fields"})
def created_not_integer(rendered: JsonObject) -> JsonObject:
    return {**rendered, "created": str(rendered["created"])}


@fault("usage-token-counts-strings", Stage.CHAT_OBJECT, api="chat",
       summary="the usage token counts are strings of digits (the usage chunk and the non-stream body)",
       seen_in="proxies that copy counts from text headers",
       findings={"schema.chat.chunk.should", "schema.chat.completion.should"})
def usage_counts_strings(rendered: JsonObject) -> JsonObject:
    usage = rendered.get("usage")
    if not isinstance(usage, dict):
        return rendered
    return {**rendered, "usage": {key: str(value) if isinstance(value, int) else value for key, value in usage.items()}}


@fault("chunk-delta-missing", Stage.CHAT_OBJECT, api="chat",
       summary="the chunk that carries the finish reason has no `delta` in its choice (stream only)",
       seen_in="servers that send the finish reason in a bare choice",
       findings={"client.openai_python.stream_helper", "schema.chat.chunk.must"})
def chunk_delta_missing(rendered: JsonObject) -> JsonObject:
    if rendered.get("object") != "chat.completion.chunk":
        return rendered
    choices = [_without(choice, "delta") if choice.get("finish_reason") else choice for choice in rendered["choices"]]
    return {**rendered, "choices": choices}


@fault("chat-null-members-omitted", Stage.CHAT_OBJECT, api="chat",
       summary="members whose value is null are left out: a chunk's `finish_reason` and `logprobs`, the message's "
               "`refusal` (stream and non-stream)",
       seen_in="servers that serialise with exclude_none (llama.cpp omits `logprobs`)",
       findings={"schema.chat.chunk.info", "schema.chat.completion.info"})
def chat_nulls_omitted(rendered: JsonObject) -> JsonObject:
    return _without_nulls(rendered)


# --- the Responses API --------------------------------------------------------------------------------------------

@fault("response-output-missing", Stage.RESPONSES_BODY, api="responses",
       summary="the response object of a non-stream answer has no `output` (non-stream only)",
       seen_in="servers that return only `output_text`",
       findings={"generation.answer.not_empty", "responses.tools.flattened_accepted", "schema.responses.response.must", "responses.body.resource_fields_present", "responses.tool_choice.required_honoured_or_refused"})
def response_output_missing(response: JsonObject) -> JsonObject:
    return _without(response, "output")


@fault("event-item-id-missing", Stage.RESPONSES_EVENTS, api="responses",
       summary="the events of an item's content (parts, deltas, what is done) carry no `item_id` (stream only)",
       seen_in="hand-written Responses encoders",
       findings={"responses.stream.function_call_arguments_done", "schema.responses.event.must",
                 "schema.responses.event.should", "responses.stream.text_event_indexes"})
def event_item_id_missing(events: list[JsonObject]) -> list[JsonObject]:
    return [_without(event, "item_id") for event in events]


@fault("usage-details-missing", Stage.RESPONSES_OBJECT, api="responses",
       summary="the response's `usage` has no `input_tokens_details` (stream and non-stream)",
       seen_in="LM Studio 0.3.29 (lmstudio-bug-tracker#1174)",
       findings={"schema.responses.response.should", "schema.responses.event.should"})
def usage_details_missing(response: JsonObject) -> JsonObject:
    return {**response, "usage": _without(response["usage"], "input_tokens_details")}


@fault("response-null-members-omitted", Stage.RESPONSES_OBJECT, api="responses",
       summary="the response object leaves out its null members (`error`, `incomplete_details`, `instructions`, "
               "`previous_response_id`…) (stream and non-stream)",
       seen_in="LM Studio 0.3.29 (lmstudio-bug-tracker#1174), servers that serialise with exclude_none",
       findings={"schema.responses.response.info", "schema.responses.event.info"})
def response_nulls_omitted(response: JsonObject) -> JsonObject:
    return _without_nulls(response)


@fault("error-message-missing", Stage.RESPONSES_ERROR, api="responses",
       summary="the error object of a refused Responses request has no `message`",
       seen_in="servers that report only an error code",
       findings={ "responses.tools.nested_error_is_lmstudio_zod",
                 "schema.errors.body.must", "errors.body.has_error_message"})
def error_message_missing(error: JsonObject) -> JsonObject:
    return _without(error, "message")


@fault("error-type-missing", Stage.RESPONSES_ERROR, api="responses",
       summary="the error object of a refused Responses request has no `type`",
       seen_in="servers that build error objects by hand",
       findings={"schema.errors.body.should"})
def error_type_missing(error: JsonObject) -> JsonObject:
    return _without(error, "type")


@fault("error-param-missing", Stage.RESPONSES_ERROR, api="responses",
       summary="the error object of a refused Responses request has no `param`",
       seen_in="llama.cpp's server (its errors carry code, message and type)",
       findings={"responses.tools.nested_error_is_lmstudio_zod",
                 "schema.errors.body.info"})
def error_param_missing(error: JsonObject) -> JsonObject:
    return _without(error, "param")


# --- the model list -----------------------------------------------------------------------------------------------

@fault("model-object-missing", Stage.MODELS_LIST, api="models",
       summary="the entries of `GET /v1/models` have no `\"object\": \"model\"`",
       seen_in="hand-written model lists",
       findings={"schema.models.list.must", "models.list.openai_shape"})
def model_object_missing(models: list[JsonObject]) -> list[JsonObject]:
    return [_without(model, "object") for model in models]


@fault("model-owned-by-missing", Stage.MODELS_LIST, api="models",
       summary="the entries of `GET /v1/models` have no `owned_by`",
       seen_in="servers that list only the model ids",
       findings={"schema.models.list.should"})
def model_owned_by_missing(models: list[JsonObject]) -> list[JsonObject]:
    return [_without(model, "owned_by") for model in models]
