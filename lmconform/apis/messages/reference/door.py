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
    COUNT_TOKENS_MISSING,
    SYSTEM_TURN_REFUSED,
    TOOL_INPUT_OFF_SCHEMA,
    TOOL_RESULT_500,
    refused_thinking_block,
    thinking_crashes,
)
from lmconform.apis.messages.reference.fields import ADAPTIVE_THINKING_IGNORED, refused_field
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
from lmconform.reference.faults.server import UNKNOWN_ROUTE_200
from lmconform.reference.model import (
    CONTEXT_WORDS,
    content_text,
    decide,
    off_schema,
    prompt_words,
    recall,
    request_seed,
    usage,
)
from lmconform.reference.overflow import overflow_answered, overflow_cut, overflow_refusal
from lmconform.reference.refusal import refusal_message, schema_refusal
from lmconform.reference.wire import SSE_HEADERS, unknown_route

COUNT_MAX_TOKENS = 1 << 20  # a cap above any thinking budget, for validating a count as a message request


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
        field_refused = refused_field(body, request.query_params, request.headers, faults)
        if field_refused is not None:
            raise Refused(*field_refused)
    except Refused as refused:
        return apply(stages.REFUSAL, faults, refused.response())
    talk = conversation(body, ADAPTIVE_THINKING_IGNORED not in faults)
    messages = talk.chat_body["messages"]
    overflow = overflow_refusal(messages, body.get("stream") is True, faults, lambda words: error_response(
        f"prompt is too long: {words} tokens > {CONTEXT_WORDS} maximum", 400))
    if overflow is not None:
        return overflow
    if (TOOL_RESULT_500 in faults and talk.has_tool_results) or thinking_crashes(body, faults):
        return error_response("Internal server error while rendering the prompt", 500)
    prompt = next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    thought = f"Thinking about: {prompt}" if talk.thinking else None
    # max_tokens caps the thinking and the text together (Anthropic's rule): the text gets what the thought leaves.
    capped = {**talk.chat_body, "max_tokens": max(body["max_tokens"] - len(thought.split()), 1)} if thought \
        else talk.chat_body
    plan = overflow_answered(recall(messages) or decide(capped), messages, faults)
    if TOOL_INPUT_OFF_SCHEMA in faults:
        plan = off_schema(talk.chat_body, plan)
    counts = usage(talk.chat_body, plan)
    message = message_object(f"msg_{request_seed(body):012x}", body["model"], plan, thought, talk.stop_sequences,
                             counts["prompt_tokens"])
    message = apply(stages.OBJECT, faults, message)
    if body.get("stream") is not True:
        return JSONResponse(apply(stages.BODY, faults, message))
    events = apply(stages.EVENTS, faults, stream_events(message))
    frames = apply(stages.FRAMES, faults, overflow_cut([(event["type"], event) for event in events], messages, faults))
    return StreamingResponse(iter([frame(name, data) for name, data in frames]), headers=SSE_HEADERS)


COUNT_TOKENS_PATH = f"{API.path}/count_tokens"


async def count_tokens(request: Request, faults: frozenset[str]) -> Response:
    """Anthropic's `POST /v1/messages/count_tokens`: the `input_tokens` the same request would be answered with.
    Claude Code calls it to decide when to compact its history."""
    if COUNT_TOKENS_MISSING in faults:
        return unknown_route(request.method, COUNT_TOKENS_PATH, UNKNOWN_ROUTE_200 in faults)
    try:
        body = await json_body(request)
        # max_tokens is no field of a count: the rest is validated as a message request's.
        validate({"max_tokens": COUNT_MAX_TOKENS, **body} if isinstance(body, dict) else body, ROLES)
    except Refused as refused:
        return apply(stages.REFUSAL, faults, refused.response())
    messages = conversation(body).chat_body["messages"]
    return JSONResponse({"input_tokens": apply(stages.COUNT, faults, prompt_words(messages), messages)})


ROUTES = {(API.method, API.path): create_message, ("POST", COUNT_TOKENS_PATH): count_tokens}
