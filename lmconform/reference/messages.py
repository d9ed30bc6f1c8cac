"""`POST /v1/messages` as Anthropic's API answers it (and LM Studio's Anthropic-compatible endpoint after it): the
request validated (lmconform.reference.messages_validation), the conversation read by the chat model of
lmconform.reference.model, and its plan rendered as a message object or as its event stream
(lmconform.reference.messages_render).

`create_message` reads as the order in which an answer is made; each `apply` there is the one place where the
faults of that stage (lmconform.reference.faults.messages) change it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.reference.chat import SSE_HEADERS
from lmconform.reference.faults import Stage, apply
from lmconform.reference.faults.messages import SYSTEM_TURN_REFUSED, TOOL_RESULT_500
from lmconform.reference.messages_render import frame, message_object, stream_events
from lmconform.reference.messages_validation import (
    ROLES,
    TURN_ROLES,
    Refused,
    conversation,
    error_response,
    json_body,
    validate,
)
from lmconform.reference.model import content_text, decide, recall, request_seed, usage


async def create_message(request: Request, faults: frozenset[str]) -> Response:
    try:
        body = apply(Stage.MESSAGES_REQUEST, faults, await json_body(request))
        validate(body, TURN_ROLES if SYSTEM_TURN_REFUSED in faults else ROLES)
    except Refused as refused:
        return apply(Stage.MESSAGES_REFUSAL, faults, refused.response())
    talk = conversation(body)
    if TOOL_RESULT_500 in faults and talk.has_tool_results:
        return error_response("Internal server error while rendering the prompt", 500)
    messages = talk.chat_body["messages"]
    plan = recall(messages) or decide(talk.chat_body)
    prompt = next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    thought = f"Thinking about: {prompt}" if talk.thinking else None
    counts = usage(talk.chat_body, plan)
    message = message_object(f"msg_{request_seed(body):012x}", body["model"], plan, thought, talk.stop_sequences,
                             counts["prompt_tokens"])
    message = apply(Stage.MESSAGES_OBJECT, faults, message)
    if body.get("stream") is not True:
        return JSONResponse(apply(Stage.MESSAGES_BODY, faults, message))
    events = apply(Stage.MESSAGES_EVENTS, faults, stream_events(message))
    frames = apply(Stage.MESSAGES_FRAMES, faults, [(event["type"], event) for event in events])
    return StreamingResponse(iter([frame(name, data) for name, data in frames]), headers=SSE_HEADERS)
