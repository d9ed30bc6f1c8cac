"""`POST /v1/chat/completions` as LM Studio answers it: validation with its bare-string error bodies, then the
plan of lmconform.reference.model rendered as an SSE stream or a JSON body.

`chat_completions` reads as the order in which an answer is made; each `apply` there is the one place where the
faults of that stage (lmconform.apis.chat.reference.faults.defects) change it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.apis.chat import API
from lmconform.apis.chat.reference import stages
from lmconform.apis.chat.reference.faults.coverage import SCHEMA_BOUNDS_DROPPED, STRUCTURED_OUTPUT_OFF_SCHEMA
from lmconform.apis.chat.reference.faults.generated import UNKNOWN_ROLE_ACCEPTED, crash
from lmconform.apis.chat.reference.faults.reasoning import effort_crash, refused_reasoning_input
from lmconform.apis.chat.reference.streams import render
from lmconform.reference.faults.registry import apply
from lmconform.reference.instances import BOUNDS
from lmconform.reference.model import (
    MAX_TOP_LOGPROBS,
    Plan,
    ToolCall,
    alternatives_of,
    arguments_json,
    compact_json,
    decide,
    off_schema,
    piece_logprobs,
    request_seed,
    stopped,
    unanswerable,
    usage,
)
from lmconform.reference.overflow import lmstudio_words, overflow_answered, overflow_cut, overflow_refusal
from lmconform.reference.refusal import refusal_message, schema_refusal
from lmconform.reference.streams import last_user_text, requested_form, streamed, thought, untagged
from lmconform.reference.wire import DEFAULT_MODEL, FRAGMENT_CHARS, SSE_HEADERS, reject_json_constant

ROLES = ("system", "user", "assistant", "tool", "developer")
TOOL_CHOICES = ("none", "auto", "required")
RESPONSE_FORMATS = ("text", "json_object", "json_schema")
MAX_STOPS = 4  # OpenAI's bound



async def chat_completions(request: Request, faults: frozenset[str]) -> Response:
    try:
        body = json.loads(await request.body(), parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        body = None
    body = apply(stages.REQUEST, faults, body)
    error = validate(body, faults)
    # JSON mode is the one form LM Studio's dialect refuses that the reference server answers (validate() above
    # decides it): `chat.response_format.json_object_accepted` holds a server to it, and a fault refuses it.
    let_through = r"/response_format/type" + (r"|/messages/\d+/role" if UNKNOWN_ROLE_ACCEPTED in faults else "")
    broken = schema_refusal(API.name, body, faults, let_through) if error is None else None
    error = refusal_message(broken) if broken is not None else error
    error = error if error is not None else refused_reasoning_input(body, faults)
    error = error if error is not None else apply(stages.UNSUPPORTED, faults, None, body)
    if error is not None:
        return apply(stages.REFUSAL, faults, JSONResponse({"error": error}, status_code=400))
    overflow = overflow_refusal(body["messages"], body.get("stream") is True, faults,
                                lambda words: JSONResponse({"error": lmstudio_words(words)}, status_code=400))
    if overflow is not None:
        return overflow
    crashed = crash(body, faults) or effort_crash(body, faults)
    if crashed is not None:
        return crashed
    unhonoured = None if STRUCTURED_OUTPUT_OFF_SCHEMA in faults else unanswerable(body)
    if unhonoured is not None:
        return apply(stages.REFUSAL, faults, JSONResponse({"error": unhonoured}, status_code=400))

    try:
        form = requested_form(request, body, faults)
    except ValueError as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    read = untagged(body) if form is not None else body  # what the model reads
    planned = overflow_answered(_held_to_schemas(read, decide(read), faults), read["messages"], faults)
    plan, _ = apply(stages.STOP, faults, stopped(apply(stages.PLAN, faults, planned), body.get("stop")),
                    body.get("stream") is True)
    counts = usage(read, plan)
    model = body["model"] if isinstance(body.get("model"), str) and body["model"] else DEFAULT_MODEL
    envelope = _Envelope(request_seed(body), int(time.time()), model)
    tool_calls = apply(stages.TOOL_CALLS, faults, [_tool_call(call) for call in plan.tool_calls])
    logprobs = apply(stages.LOGPROBS, faults, _logprobs(plan.text, body)) if body.get("logprobs") is True else None
    if body.get("stream") is not True:
        body = apply(stages.BODY, faults, _completion_body(plan, tool_calls, counts, envelope, logprobs,
                                                           _choice_count(body)))
        return JSONResponse(apply(stages.OBJECT, faults, body))
    per_call = [_call_deltas(position, call) for position, call in enumerate(tool_calls)]
    per_call = apply(stages.TOOL_CALL_DELTAS, faults, per_call)
    chunks = _each_choice(_stream_chunks(plan, per_call, counts if _usage_requested(body) else None, envelope,
                                         logprobs), _choice_count(body))
    if form is not None:
        reasoning = thought(last_user_text(read["messages"]))
        return streamed(render(chunks, reasoning, form), SSE_HEADERS, request)
    chunks = [apply(stages.OBJECT, faults, chunk) for chunk in chunks]
    data: list[dict[str, Any] | str] = [*chunks, "[DONE]"]
    lines = apply(stages.STREAM, faults, overflow_cut(data, read["messages"], faults))
    frames = apply(stages.SSE, faults, _sent([_data(line) for line in lines]), request.app.state.stopping)
    return StreamingResponse(frames, headers=SSE_HEADERS)


def _held_to_schemas(body: dict[str, Any], plan: Plan, faults: frozenset[str]) -> Plan:
    """The plan as the server lets it out: held to the request's schemas, unless a fault drops them or their bounds."""
    if STRUCTURED_OUTPUT_OFF_SCHEMA in faults:
        return off_schema(body, plan)
    return off_schema(body, plan, BOUNDS) if SCHEMA_BOUNDS_DROPPED in faults else plan


def validate(body: Any, faults: frozenset[str] = frozenset()) -> str | None:
    """The message of the 400 body for this request, or None when it is acceptable. The tool_choice messages are
    LM Studio's word for word; LM Studio's wording for the others is not on record, so they follow its style."""
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    messages = body.get("messages")
    if messages is None:
        return "'messages' field is required"
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    roles = () if UNKNOWN_ROLE_ACCEPTED in faults else ROLES
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or \
                (roles and message["role"] not in roles):
            return f"'messages[{i}].role' must be one of: {', '.join(ROLES)}"
        problem = _message_problem(message)
        if problem is not None:
            return f"'messages[{i}]{problem}"
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        return "'stream' must be a boolean"
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "'tools' must be an array"
        for i, tool in enumerate(tools):
            problem = _tool_problem(tool)
            if problem is not None:
                return f"Invalid 'tools[{i}]': {problem}"
    tool_choice = body.get("tool_choice")
    supported = f"Supported string values: {', '.join(TOOL_CHOICES)}"
    if isinstance(tool_choice, str) and tool_choice not in TOOL_CHOICES:
        return f"Invalid tool_choice value: '{tool_choice}'. {supported}"
    if tool_choice is not None and not isinstance(tool_choice, str):
        return f"Invalid tool_choice type: '{_js_typeof(tool_choice)}'. {supported}"
    return _response_format_problem(body.get("response_format")) or _options_problem(body)


def _options_problem(body: dict[str, Any]) -> str | None:
    """What OpenAI's reference bounds of `stop` and `top_logprobs` refuse."""
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or isinstance(stop, list) and 1 <= len(stop) <= MAX_STOPS
                                 and all(isinstance(item, str) for item in stop)):
        return f"'stop' must be a string or an array of 1 to {MAX_STOPS} strings"
    top = body.get("top_logprobs")
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= MAX_TOP_LOGPROBS):
        return f"'top_logprobs' must be an integer from 0 to {MAX_TOP_LOGPROBS}"
    if top is not None and body.get("logprobs") is not True:
        return "'top_logprobs' requires 'logprobs' to be true"
    return None


def _response_format_problem(response_format: Any) -> str | None:
    if response_format is None:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind not in RESPONSE_FORMATS:
        return f"'response_format.type' must be one of: {', '.join(RESPONSE_FORMATS)}"
    schema = (response_format.get("json_schema") or {}) if kind == "json_schema" else {}
    if kind == "json_schema" and not isinstance(schema.get("schema") if isinstance(schema, dict) else None, dict):
        return "'response_format.json_schema.schema' must be an object"
    return None


def _message_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with a message whose role is known: its content's type, or a tool result without its call."""
    content = message.get("content")
    if not (isinstance(content, str | list) or (content is None and message["role"] != "user")):
        return ".content' must be a string or an array of content parts"
    if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
        return ".tool_call_id' is required for role 'tool'"
    return None


def _tool_problem(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return "a tool must be an object"
    if tool.get("type") != "function":
        return "'type' must be 'function'"
    function = tool.get("function")
    if not isinstance(function, dict):
        return "'function' must be an object"
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return "'function.name' must be a non-empty string"
    if function.get("parameters") is not None and not isinstance(function["parameters"], dict):
        return "'function.parameters' must be an object"
    return None


def _js_typeof(value: Any) -> str:
    """The type name LM Studio (a JavaScript server) puts in its error: arrays and null are 'object' there."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "object"


def _usage_requested(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


@dataclass(frozen=True)
class _Envelope:
    """What every chunk or body of one response shares."""

    seed: int
    created: int
    model: str

    def fields(self, object_: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{self.seed}",
            "object": object_,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": self.model,
        }

    @cached_property
    def _chunk_fields(self) -> dict[str, Any]:  # made once per stream, copied into each of its chunks
        return self.fields("chat.completion.chunk")

    def chunk(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {**self._chunk_fields, "choices": choices, **extra}


def _delta_choice(delta: dict[str, Any], finish_reason: str | None = None,
                  logprobs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish_reason}


def _logprobs(text: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The log probability of each piece of the text, the pieces the stream sends."""
    return [piece_logprobs(piece, alternatives_of(body)) for piece in _pieces(text)]


def _tool_call(call: ToolCall) -> dict[str, Any]:
    """A tool call as the message carries it."""
    function = {"name": call.name, "arguments": arguments_json(call.arguments)}
    return {"id": call.id, "type": "function", "function": function}


def _call_deltas(position: int, call: dict[str, Any]) -> list[dict[str, Any]]:
    """The streamed entries of one call: its identity with empty arguments, then the arguments in pieces. Arguments
    that are not a string (the arguments-object fault) cannot be cut, and go whole in the opening delta."""
    arguments = call["function"]["arguments"]
    if not isinstance(arguments, str):
        return [{"index": position, **call}]
    opening = {"index": position, **call, "function": {**call["function"], "arguments": ""}}
    pieces = (arguments[start:start + FRAGMENT_CHARS] for start in range(0, len(arguments), FRAGMENT_CHARS))
    return [opening, *({"index": position, "function": {"arguments": piece}} for piece in pieces)]


def _stream_chunks(plan: Plan, per_call: list[list[dict[str, Any]]], counts: dict[str, int] | None,
                   envelope: _Envelope, logprobs: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    # Word by word with its spaces, so the pieces concatenate back to the text exactly. Reasoning comes first, in
    # `reasoning` as LM Studio sends gpt-oss's since 0.3.23.
    deltas += ({"reasoning": piece} for piece in _pieces(plan.reasoning or ""))
    pieces = _pieces(plan.text)
    # Each piece of the text with its log probability, when they were asked for (llama-server sends them so).
    per_piece = [{"content": [entry], "refusal": None} for entry in logprobs] if logprobs is not None else []
    chunks = [envelope.chunk([_delta_choice(delta)]) for delta in deltas]
    chunks += (envelope.chunk([_delta_choice({"content": piece}, None, per_piece[i] if i < len(per_piece) else None)])
               for i, piece in enumerate(pieces))
    chunks += (envelope.chunk([_delta_choice({"refusal": piece})]) for piece in _pieces(plan.refusal or ""))
    chunks += (envelope.chunk([_delta_choice({"tool_calls": [entry]})]) for entries in per_call for entry in entries)
    chunks.append(envelope.chunk([_delta_choice({}, plan.finish_reason)]))
    if counts is not None:
        chunks.append(envelope.chunk([], usage=counts))
    return chunks


def _pieces(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def _each_choice(chunks: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """A stream of `n` choices: the chunks of the first choice, then the same chunks for each other choice under
    its own index (the model is deterministic: each is the same answer), then the usage chunk, which has none."""
    answer = [chunk for chunk in chunks if chunk["choices"]]
    return [*({**chunk, "choices": [{**chunk["choices"][0], "index": index}]} for index in range(n) for chunk in answer),
            *(chunk for chunk in chunks if not chunk["choices"])]


def _choice_count(body: dict[str, Any]) -> int:
    """How many choices an answer brings: `n`."""
    n = body.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1


def _completion_body(plan: Plan, tool_calls: list[dict[str, Any]], counts: dict[str, int],
                     envelope: _Envelope, logprobs: list[dict[str, Any]] | None, n: int = 1) -> dict[str, Any]:
    answered = plan.text or not (tool_calls or plan.refusal)
    message: dict[str, Any] = {"role": "assistant", "content": plan.text if answered else None,
                               "refusal": plan.refusal}
    if plan.reasoning:
        message["reasoning"] = plan.reasoning
    if tool_calls:
        message["tool_calls"] = tool_calls
    content_logprobs = {"content": logprobs, "refusal": None} if logprobs is not None else None
    choice = {"index": 0, "message": message, "logprobs": content_logprobs, "finish_reason": plan.finish_reason}
    # The model is deterministic: each of the n choices is the same answer.
    choices = [{**choice, "index": index} for index in range(n)]
    return {**envelope.fields("chat.completion"), "choices": choices, "usage": counts}


def _data(line: dict[str, Any] | str) -> bytes:
    """The SSE event of one data line: a chunk object as JSON, text as it is."""
    text = line if isinstance(line, str) else compact_json(line)
    return b"data: " + text.encode() + b"\n\n"


async def _sent(frames: list[bytes]) -> AsyncIterator[bytes]:
    for frame in frames:
        yield frame


ROUTES = {(API.method, API.path): chat_completions}
