"""`POST /v1/messages` as Anthropic's API answers it (and LM Studio's Anthropic-compatible endpoint after it): the
request validated (lmconform.apis.messages.reference.validation), the conversation read by the chat model of
lmconform.reference.model, and its plan rendered as a message object or as its event stream
(lmconform.apis.messages.reference.render).

`create_message` reads as the order in which an answer is made; each `apply` there is the one place where the
faults of that stage (lmconform.apis.messages.reference.faults) change it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.apis.messages import API
from lmconform.apis.messages.reference import stages
from lmconform.apis.messages.reference.faults import (
    SYSTEM_TURN_REFUSED,
    TOOL_INPUT_OFF_SCHEMA,
    TOOL_RESULT_500,
    refused_thinking_block,
    thinking_crashes,
)
from lmconform.apis.messages.reference.render import frame, message_object, stream_events
from lmconform.apis.messages.reference.validation import (
    ROLES,
    TURN_ROLES,
    Refused,
    conversation,
    error_response,
    json_body,
    validate,
)
from lmconform.reference.faults.registry import apply
from lmconform.reference.model import content_text, decide, off_schema, recall, request_seed, usage
from lmconform.reference.refusal import refusal_message, schema_refusal
from lmconform.reference.wire import SSE_HEADERS


async def create_message(request: Request, faults: frozenset[str]) -> Response:
    try:
        body = apply(stages.REQUEST, faults, await json_body(request))
        validate(body, TURN_ROLES if SYSTEM_TURN_REFUSED in faults else ROLES)
        broken = schema_refusal(API.name, body, faults)
        if broken is not None:
            raise Refused(refusal_message(broken))
        thinking_refused = refused_thinking_block(body, faults)
        if thinking_refused is not None:
            raise Refused(thinking_refused)
    except Refused as refused:
        return apply(stages.REFUSAL, faults, refused.response())
    talk = conversation(body)
    if (TOOL_RESULT_500 in faults and talk.has_tool_results) or thinking_crashes(body, faults):
        return error_response("Internal server error while rendering the prompt", 500)
    messages = talk.chat_body["messages"]
    plan = recall(messages) or decide(talk.chat_body)
    if TOOL_INPUT_OFF_SCHEMA in faults:
        plan = off_schema(talk.chat_body, plan)
    prompt = next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    thought = f"Thinking about: {prompt}" if talk.thinking else None
    counts = usage(talk.chat_body, plan)
    message = message_object(f"msg_{request_seed(body):012x}", body["model"], plan, thought, talk.stop_sequences,
                             counts["prompt_tokens"])
    message = apply(stages.OBJECT, faults, message)
    if body.get("stream") is not True:
        return JSONResponse(apply(stages.BODY, faults, message))
    events = apply(stages.EVENTS, faults, stream_events(message))
    frames = apply(stages.FRAMES, faults, [(event["type"], event) for event in events])
    return StreamingResponse(iter([frame(name, data) for name, data in frames]), headers=SSE_HEADERS)


ROUTES = {(API.method, API.path): create_message}
