"""Variants: valid forms that real servers send differently from OpenAI, served like faults so that the whole
suite can be run against each. None is a defect: a check that reports one above INFO raises a false alarm, and
tests/test_fault_catalogue.py holds every check to that.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from starlette.responses import JSONResponse, Response

from lmconform.apis.chat.reference import stages
from lmconform.apis.chat.reference.faults.defects import Entry, Frames, Line, _each_chunk, _with_arguments
from lmconform.reference.faults.registry import variant

Event = dict[str, Any]


@variant("llama-server-tool-deltas", stages.TOOL_CALL_DELTAS, api="chat",
         summary="a tool call's first delta carries its name and the first arguments bytes (`{`) together "
                 "(stream only)",
         seen_in="llama.cpp's llama-server b8988 (ggml-org/llama.cpp#22722); Ollama (huggingface.js PR#1512)")
def name_and_brace_together(calls: list[list[Entry]]) -> list[list[Entry]]:
    def merged(opening: Entry, rest: list[Entry]) -> list[Entry]:
        if not rest:
            return [opening]
        first, *others = rest
        return [_with_arguments(opening, first["function"]["arguments"]), *others]

    return [merged(opening, rest) for opening, *rest in calls]


@variant("type-repeated-continuation", stages.TOOL_CALL_DELTAS, api="chat",
         summary='continuation tool-call deltas repeat `"type": "function"` (stream only)',
         seen_in="LM Studio 0.3.16 (lmstudio-bug-tracker#649 log); the openai SDK accepts \"function\"")
def type_repeated(calls: list[list[Entry]]) -> list[list[Entry]]:
    return [[opening, *({**entry, "type": "function"} for entry in rest)] for opening, *rest in calls]


@variant("whole-call-one-chunk", stages.TOOL_CALL_DELTAS, api="chat",
         summary="each tool call comes whole in one delta: id, name and all its arguments (stream only)",
         seen_in="Ollama (ollama#11633); LM Studio 0.4.12 build 1 for some models (lmstudio-bug-tracker#1868)")
def whole_call_one_chunk(calls: list[list[Entry]]) -> list[list[Entry]]:
    def whole(opening: Entry, rest: list[Entry]) -> list[Entry]:
        arguments = "".join(entry["function"]["arguments"] for entry in rest)
        return [_with_arguments(opening, opening["function"]["arguments"] + arguments)]

    return [whole(opening, rest) for opening, *rest in calls]


@variant("vllm-tool-ids", stages.TOOL_CALLS, api="chat",
         summary="tool-call ids in vLLM's `chatcmpl-tool-<hex>` form (stream and non-stream)",
         seen_in="vLLM (tests/tool_use/test_tool_calls.py); ids are opaque to clients")
def vllm_tool_ids(calls: list[Entry]) -> list[Entry]:
    return [{**call, "id": f"chatcmpl-tool-{str(call.get('id', '')).rjust(32, '0')}"} for call in calls]


@variant("usage-timings", stages.STREAM, api="chat",
         summary="the usage chunk also carries llama.cpp's `timings` object (stream only)",
         seen_in="llama.cpp's llama-server (test_chat_completion.py::test_chat_completion_with_timings_per_token)")
def usage_timings(lines: list[Line]) -> list[Line]:
    timings = {"prompt_n": 5, "prompt_per_second": 250.0, "predicted_n": 1, "predicted_per_second": 40.0}
    return _each_chunk(lines, lambda chunk: {**chunk, "timings": timings} if "usage" in chunk else chunk)


@variant("usage-chunk-with-choice", stages.STREAM, api="chat",
         summary="the usage chunk carries `choices: [{index: 0, delta: {}}]` instead of `[]` (stream only)",
         seen_in="LiteLLM proxy (BerriAI/litellm#28735); mlx-dspark#37")
def usage_chunk_with_choice(lines: list[Line]) -> list[Line]:
    return _each_chunk(lines, lambda chunk: {**chunk, "choices": [{"index": 0, "delta": {}}]}
                       if "usage" in chunk and not chunk["choices"] else chunk)


@variant("role-with-content", stages.STREAM, api="chat",
         summary="the first delta carries the role and the first words together (stream only)",
         seen_in="LM Studio (lmstudio-bug-tracker#676 sample)")
def role_with_content(lines: list[Line]) -> list[Line]:
    first, second, *rest = lines
    if not (isinstance(first, dict) and isinstance(second, dict) and second["choices"] and "content" in second["choices"][0]["delta"]):
        return lines
    delta = {"role": "assistant", "content": second["choices"][0]["delta"]["content"]}
    return [{**first, "choices": [{**second["choices"][0], "delta": delta}]}, *rest]  # its logprobs too


@variant("keepalive-comments", stages.SSE, api="http",
         summary="SSE comment lines (`:` alone, `: ping - <time>`) between the events, without `id:` fields "
                 "(stream only)",
         seen_in="llama.cpp's llama-server (idle ping); OpenRouter (`: OPENROUTER PROCESSING`)")
async def keepalive_comments(frames: Frames, stopping: threading.Event) -> Frames:
    async for frame in frames:
        yield b":\n\n: ping - 2026-01-01 00:00:00.000000+00:00\n\n" + frame


@variant("extra-body-keys", stages.BODY, api="chat",
         summary="the body carries keys OpenAI does not send (`stats`, `timings`) and a build string as "
                 "`system_fingerprint` (non-stream only)",
         seen_in="LM Studio 0.3.10 (`stats`); llama.cpp's llama-server (`timings`, `b6497-cd08fc3e`)")
def extra_body_keys(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "system_fingerprint": "b6497-cd08fc3e", "stats": {"tokens_per_second": 40.0},
            "timings": {"predicted_n": 1}}


@variant("content-empty-with-tool-calls", stages.BODY, api="chat",
         summary='a message with tool calls says `"content": ""`, not null (non-stream only)',
         seen_in="LM Studio with Qwen models (rockbite/localforge#32; lmstudio-bug-tracker#830)")
def content_empty_with_tool_calls(body: dict[str, Any]) -> dict[str, Any]:
    choice = body["choices"][0]
    if not choice["message"].get("tool_calls"):
        return body
    return {**body, "choices": [{**choice, "message": {**choice["message"], "content": ""}}]}


@variant("error-object-integer-code", stages.REFUSAL, api="chat",
         summary='chat refusals as an error object whose `code` is the integer status: `{"error": {"message", '
                 '"type", "code": 400}}`',
         seen_in="llama.cpp's llama-server; vLLM (responses/test_errors.py)")
def error_object_integer_code(refusal: Response) -> Response:
    message = json.loads(bytes(refusal.body))["error"]
    error = {"message": message, "type": "invalid_request_error", "code": refusal.status_code}
    return JSONResponse({"error": error}, status_code=refusal.status_code)




@variant("logprobs-refused", stages.UNSUPPORTED, api="chat",
         summary="a request that asks for `logprobs` is refused with a 400 that says they are not supported",
         seen_in="servers that do not offer log probabilities and say so")
def logprobs_refused(refusal: str | None, body: dict[str, Any]) -> str | None:
    return refusal or ("'logprobs' is not supported by this server" if body.get("logprobs") else None)
