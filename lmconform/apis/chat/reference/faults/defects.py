"""The faults of `POST /v1/chat/completions` and `GET /v1/models`, and of how their answers are framed.

Each one names a single deviation from what LM Studio sends and says whether it shows in the streamed body, the
non-stream body, or both. A fault in both changes a stage that both are rendered from (the plan, the message's
tool calls); a stream-only fault changes the deltas, the data lines or the bytes of the stream.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from itertools import accumulate, count, zip_longest
from typing import Any

from starlette.responses import PlainTextResponse, Response

from lmconform.apis.chat.reference import stages
from lmconform.reference.faults.registry import fault
from lmconform.reference.model import Plan

_STALL_SECONDS = 600.0
_PADDING_TOTAL = 1 << 30
_PADDING_LINE = b": " + b"." * ((1 << 16) - 3) + b"\n"

Entry = dict[str, Any]  # a tool_calls entry: of the message, or of one streamed delta
Line = dict[str, Any] | str  # what one `data:` line of a stream carries: a chunk object, or text such as [DONE]
Frames = AsyncIterator[bytes]


def _with_arguments(entry: Entry, arguments: Any) -> Entry:
    return {**entry, "function": {**entry["function"], "arguments": arguments}}


def _arguments_changed(calls: list[Entry], change: Callable[[str], Any]) -> list[Entry]:
    """Each call with `change` applied to its arguments string; arguments already made an object stay so."""
    return [_with_arguments(call, change(call["function"]["arguments"]))
            if isinstance(call["function"]["arguments"], str) else call for call in calls]


def _reindexed(calls: list[list[Entry]], index: Callable[[int], int]) -> list[list[Entry]]:
    """Each entry that has an index, with `index(old)` instead; a fault that removed them all leaves none."""
    return [[{**entry, "index": index(entry["index"])} if "index" in entry else entry for entry in call]
            for call in calls]


def _first_chunk(lines: list[Line]) -> dict[str, Any]:
    """A stream's first line, which the door always makes a chunk (the role delta), never text such as [DONE]."""
    first = lines[0]
    assert isinstance(first, dict), "the door opens every stream with a chunk"
    return first


def _each_chunk(lines: list[Line], change: Callable[[dict[str, Any]], dict[str, Any]]) -> list[Line]:
    return [change(line) if isinstance(line, dict) else line for line in lines]


async def _marking_second_chunk(frames: Frames) -> AsyncIterator[tuple[bytes, bool]]:
    """Each frame, and whether it is the second chunk event. "After the first chunk" is just before it: after any
    line a fault sent with the first chunk."""
    chunks = 0
    async for frame in frames:
        is_chunk = frame.startswith(b"data: {")
        chunks += is_chunk
        yield frame, is_chunk and chunks == 2


async def _silence(stopping: threading.Event, seconds: float) -> None:
    """Send nothing until the time is up or the server stops. A client that disconnects ends it sooner: Starlette
    cancels the response when it sees the disconnect."""
    deadline = time.monotonic() + seconds
    while not stopping.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


@fault("tool-index-missing", stages.TOOL_CALL_DELTAS, api="chat",
       summary="streamed tool_calls entries carry no `index` key (stream only)",
       seen_in="ollama#7881, openai-python PR#3246")
def index_missing(calls: list[list[Entry]]) -> list[list[Entry]]:
    return [[{key: value for key, value in entry.items() if key != "index"} for entry in call] for call in calls]


@fault("tool-index-one", stages.TOOL_CALL_DELTAS, api="chat",
       summary="streamed tool call indexes start at 1 instead of 0 (stream only)",
       seen_in="Void parser; LocalAI#9722")
def index_from_one(calls: list[list[Entry]]) -> list[list[Entry]]:
    return _reindexed(calls, lambda index: index + 1)


@fault("arguments-object", stages.TOOL_CALLS, api="chat",
       summary="`arguments` is a JSON object, not a string: whole in the first tool delta, or in the message "
               "(stream and non-stream)",
       seen_in="llama.cpp#20198, litellm PR#37792")
def arguments_object(calls: list[Entry]) -> list[Entry]:
    return _arguments_changed(calls, json.loads)


@fault("id-name-repeated", stages.TOOL_CALL_DELTAS, api="chat",
       summary="every tool call delta repeats `id`, `type` and `function.name` (stream only)",
       seen_in="SillyTavern PR#5948; llama-cpp-python's server")
def identity_repeated(calls: list[list[Entry]]) -> list[list[Entry]]:
    return [[opening, *(_with_arguments(opening, entry["function"]["arguments"]) for entry in rest)]
            for opening, *rest in calls]


@fault("arguments-invalid-json", stages.TOOL_CALLS, api="chat",
       summary="the arguments string loses its first `{`, so it is not JSON (stream and non-stream)",
       seen_in="llama.cpp#22722")
def arguments_invalid_json(calls: list[Entry]) -> list[Entry]:
    return _arguments_changed(calls, lambda arguments: arguments[1:])


@fault("arguments-cumulative", stages.TOOL_CALL_DELTAS, api="chat",
       summary="each arguments delta re-sends all arguments so far (stream only)",
       seen_in="litellm issues")
def arguments_cumulative(calls: list[list[Entry]]) -> list[list[Entry]]:
    def so_far(rest: list[Entry]) -> list[Entry]:
        sums = accumulate(entry["function"]["arguments"] for entry in rest)
        return [_with_arguments(entry, arguments) for entry, arguments in zip(rest, sums)]

    return [[opening, *so_far(rest)] for opening, *rest in calls]


@fault("two-calls-one-index", stages.TOOL_CALL_DELTAS, api="chat",
       summary="parallel tool calls are all streamed at index 0, each with its own id and name (stream only)",
       seen_in="litellm PR#37792")
def one_index(calls: list[list[Entry]]) -> list[list[Entry]]:
    # The first call's index rather than 0, so that with tool-index-one every call is at 1.
    return _reindexed(calls, lambda index: calls[0][0]["index"])


@fault("type-null-continuation", stages.TOOL_CALL_DELTAS, api="chat",
       summary='continuation tool call deltas carry `"type": null` (stream only)',
       seen_in="seen on a Python LLM stack")
def type_null_continuation(calls: list[list[Entry]]) -> list[list[Entry]]:
    return [[opening, *({**entry, "type": None} for entry in rest)] for opening, *rest in calls]


@fault("empty-response", stages.PLAN, api="chat",
       summary="no text, no reasoning, no tool call: only the role and a `stop` finish (stream and non-stream)",
       seen_in='Void ("Response from model was empty")')
def empty_response(plan: Plan) -> Plan:
    return Plan("", (), "stop")


@fault("json-instead-of-sse", stages.REQUEST, api="http",
       summary="a request with tools and `stream: true` is answered with the non-stream JSON body",
       seen_in="sglang#2810")
def no_streaming_with_tools(body: Any) -> Any:
    return {**body, "stream": False} if isinstance(body, dict) and body.get("tools") else body


@fault("no-done", stages.STREAM, api="chat",
       summary="the stream ends without `data: [DONE]` (stream only)",
       seen_in="several Python stacks")
def no_done(lines: list[Line]) -> list[Line]:
    return [line for line in lines if line != "[DONE]"]


@fault("finish-stop-after-tools", stages.PLAN, api="chat",
       summary='`finish_reason` is "stop" after tool calls (stream and non-stream)',
       seen_in="vllm PR#9209, litellm#35663")
def finish_stop_after_tools(plan: Plan) -> Plan:
    return replace(plan, finish_reason="stop") if plan.tool_calls else plan


@fault("chunk-not-json", stages.STREAM, api="chat",
       summary="after the first chunk, one extra data line that is not JSON: `data: processing...` (stream only)",
       seen_in="proxies that inject text")
def chunk_not_json(lines: list[Line]) -> list[Line]:
    return [lines[0], "processing...", *lines[1:]]


@fault("server-error-on-bad-input", stages.REFUSAL, api="http",
       summary="a request that deserves a 400 validation error gets HTTP 500 text/plain instead",
       seen_in="llama-cpp-python's server")
def server_error(refusal: Response) -> Response:
    return PlainTextResponse("Internal Server Error", status_code=500)


@fault("data-after-done", stages.STREAM, api="chat",
       summary="one more chunk event follows `data: [DONE]` (stream only)",
       seen_in="hand-written SSE encoders")
def data_after_done(lines: list[Line]) -> list[Line]:
    envelope = {key: value for key, value in _first_chunk(lines).items() if key != "choices"}
    return [*lines, {**envelope, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": None}]}]


# The openai SDK decodes the whole body strictly: invalid UTF-8 even in a comment line makes it raise.
@fault("invalid-utf8", stages.SSE, api="http",
       summary="after the first event, an SSE comment line with invalid UTF-8 bytes; the JSON is untouched "
               "(stream only)",
       seen_in="byte-level proxies that inject keep-alive comments")
async def invalid_utf8(frames: Frames, stopping: threading.Event) -> Frames:
    async for frame, second_chunk in _marking_second_chunk(frames):
        if second_chunk:
            yield b": \xff\xfe keep-alive\n\n"
        yield frame


@fault("body-too-large", stages.SSE, api="http",
       summary="1 GiB of SSE comment padding precedes the real chunks (stream only)",
       seen_in="runaway generations and misbehaving proxies")
async def body_too_large(frames: Frames, stopping: threading.Event) -> Frames:
    # Lazily, line by line: the client is meant to give up long before the end.
    for _ in range(_PADDING_TOTAL // len(_PADDING_LINE)):
        if stopping.is_set():
            return
        yield _PADDING_LINE
        # Let the server's loop run between lines: it then notices the client that gave up, and ends the stream.
        await asyncio.sleep(0)
    async for frame in frames:
        yield frame


# No findings: the checks are left without an answer, which is ERROR, not a verdict (tests/test_plugin.py).
@fault("stall", stages.SSE, api="http",
       summary="after the first chunk the stream goes silent with the connection held open, up to 10 minutes "
               "(stream only)",
       seen_in="hung model processes behind a live connection")
async def stall(frames: Frames, stopping: threading.Event) -> Frames:
    async for frame, second_chunk in _marking_second_chunk(frames):
        if second_chunk:
            await _silence(stopping, _STALL_SECONDS)
            return
        yield frame


@fault("tool-id-missing", stages.TOOL_CALLS, api="chat",
       summary="a tool call has no `id`: first delta or message (stream and non-stream)",
       seen_in="servers that stream OpenAI-style calls without ids; llama.cpp b4761 (ggml-org/llama.cpp#11992)")
def tool_id_missing(calls: list[Entry]) -> list[Entry]:
    return [{key: value for key, value in call.items() if key != "id"} for call in calls]


@fault("finish-reason-missing", stages.PLAN, api="chat",
       summary="`finish_reason` is never set: null in the finish chunk and the message choice "
               "(stream and non-stream)",
       seen_in="servers that end a stream without a finish reason")
def finish_reason_missing(plan: Plan) -> Plan:
    return replace(plan, finish_reason=None)


@fault("role-missing", stages.STREAM, api="chat",
       summary="the first chunk's delta has no `role` (stream only)",
       seen_in="servers that never send the role delta")
def role_missing(lines: list[Line]) -> list[Line]:
    first = _first_chunk(lines)
    choice = first["choices"][0]
    delta = {key: value for key, value in choice["delta"].items() if key != "role"}
    return [{**first, "choices": [{**choice, "delta": delta}]}, *lines[1:]]


@fault("chunk-id-changes", stages.STREAM, api="chat",
       summary="each chunk carries a different `id` (stream only)",
       seen_in="servers that mint an id per chunk")
def chunk_id_changes(lines: list[Line]) -> list[Line]:
    prefix, first = _first_chunk(lines)["id"].rsplit("-", 1)
    serials = count(int(first))
    return _each_chunk(lines, lambda chunk: {**chunk, "id": f"{prefix}-{next(serials)}"})


# The SDK's stream helper skips chunks that do not say chat.completion.chunk, then asserts.
@fault("object-not-chunk", stages.STREAM, api="chat",
       summary='stream chunks say `"object": "chat.completion"` (stream only)',
       seen_in="servers that reuse the non-stream object type")
def object_not_chunk(lines: list[Line]) -> list[Line]:
    return _each_chunk(lines, lambda chunk: {**chunk, "object": "chat.completion"})


@fault("usage-chunk-unrequested", stages.REQUEST, api="chat",
       summary="the `choices: []` usage chunk is sent without `stream_options.include_usage` (stream only)",
       seen_in="foundry-local#905 (what it breaks)")
def usage_unrequested(body: Any) -> Any:
    return {**body, "stream_options": {"include_usage": True}} if isinstance(body, dict) else body


@fault("usage-ignored", stages.REQUEST, api="chat",
       summary="`stream_options.include_usage: true` is ignored: no usage chunk (stream only)",
       seen_in="servers that do not implement stream_options")
def usage_ignored(body: Any) -> Any:
    return {key: value for key, value in body.items() if key != "stream_options"} if isinstance(body, dict) else body


@fault("tool-choice-ignored", stages.REQUEST, api="chat",
       summary="`tool_choice` is neither validated nor honoured; every value behaves as auto "
               "(stream and non-stream)",
       seen_in="several local servers")
def tool_choice_ignored(body: Any) -> Any:
    return {key: value for key, value in body.items() if key != "tool_choice"} if isinstance(body, dict) else body


@fault("tool-calls-interleaved", stages.TOOL_CALL_DELTAS, api="chat",
       summary="parallel tool calls stream their deltas in turns, a delta of each call in rotation (stream only)",
       seen_in="no public report; LM Studio's generator API requires one call at a time")
def tool_calls_interleaved(calls: list[list[Entry]]) -> list[list[Entry]]:
    # One delta of each call in turn: legal for index-keyed OpenAI clients, not for the generator order.
    return [[entry for entry in turn if entry is not None] for turn in zip_longest(*calls)]
