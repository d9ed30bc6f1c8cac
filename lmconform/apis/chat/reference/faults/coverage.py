"""Faults of chat completions, the model list and HTTP framing that LM Studio's users, other servers' users and
the anchor suites (llama.cpp's server tests, vLLM's tests) reported: each one a defect seen on the wire, named after
it, with the release it was seen in. docs/coverage.md lists the report behind each one.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import replace
from typing import Any

from lmconform.apis.chat.reference import stages
from lmconform.apis.chat.reference.faults.defects import (
    Entry,
    Frames,
    Line,
    _each_chunk,
    _marking_second_chunk,
    _with_arguments,
)
from lmconform.reference.faults.edits import without
from lmconform.reference.faults.registry import fault, flag
from lmconform.reference.model import Plan, arguments_json


@fault("name-empty-continuation", stages.TOOL_CALL_DELTAS, api="chat",
       summary='continuation tool-call deltas carry `"function": {"name": ""}` and `"type": "function"` '
               "(stream only)",
       seen_in="LM Studio 0.3.15, 0.3.16 beta 1 (lmstudio-bug-tracker#649; Zed's LM Studio provider)")
def name_empty_continuation(calls: list[list[Entry]]) -> list[list[Entry]]:
    def emptied(entry: Entry) -> Entry:
        return {**entry, "type": "function", "function": {"name": "", **entry["function"]}}

    return [[opening, *map(emptied, rest)] for opening, *rest in calls]


@fault("tool-calls-empty-list", stages.BODY, api="chat",
       summary="every non-stream message carries `tool_calls: []`, even without a call (non-stream only)",
       seen_in="LM Studio 0.3.35 (lmstudio-bug-tracker#1318; opencode#4255 hangs)")
def tool_calls_empty_list(body: dict[str, Any]) -> dict[str, Any]:
    choice, *others = body["choices"]
    message = {**choice["message"], "tool_calls": choice["message"].get("tool_calls") or []}
    return {**body, "choices": [{**choice, "message": message}, *others]}


@fault("tool-id-empty", stages.TOOL_CALLS, api="chat",
       summary='tool calls carry `"id": ""`: first delta or message (stream and non-stream)',
       seen_in="LM Studio 0.3.21 beta 3 (lmstudio-bug-tracker#830; Crush, thane-ai-agent)")
def tool_id_empty(calls: list[Entry]) -> list[Entry]:
    return [{**call, "id": ""} for call in calls]


@fault("finish-tool-calls-without-call", stages.PLAN, api="chat",
       summary='`finish_reason` is "tool_calls" on an answer without any call (stream and non-stream)',
       seen_in="LocalAI 3.5.0 (mudler/LocalAI#6218); mastra's agent loop spun on it (mastra PR#14187)")
def finish_tool_calls_without_call(plan: Plan) -> Plan:
    return replace(plan, finish_reason="tool_calls") if plan.finish_reason == "stop" else plan


@fault("finish-stop-at-max-tokens", stages.PLAN, api="chat",
       summary='an answer cut at `max_tokens` says `finish_reason: "stop"`, not "length" (stream and non-stream)',
       seen_in="llama.cpp's server tests assert length (test_chat_completion.py); servers that hard-code stop")
def finish_stop_at_max_tokens(plan: Plan) -> Plan:
    return replace(plan, finish_reason="stop") if plan.finish_reason == "length" else plan


@fault("parallel-calls-ignored", stages.REQUEST, api="chat",
       summary="`parallel_tool_calls: false` is ignored: every tool the prompt asks for is called "
               "(stream and non-stream)",
       seen_in="llama.cpp's and vLLM's tests assert one call (test_tool_call.py, test_parallel_tool_calls.py)")
def parallel_calls_ignored(body: Any) -> Any:
    return {key: value for key, value in body.items() if key != "parallel_tool_calls"} \
        if isinstance(body, dict) else body


@fault("tool-choice-null-rejected", stages.REQUEST, api="chat",
       summary="an explicit `tool_choice: null` is refused 400 as a wrong type, where it means the default",
       seen_in="vLLM before tests/entrypoints/openai/chat_completion/test_tool_choice_null.py")
def tool_choice_null_rejected(body: Any) -> Any:
    # JavaScript's typeof null is "object": the refusal reads as LM Studio's would.
    if isinstance(body, dict) and "tool_choice" in body and body["tool_choice"] is None:
        return {**body, "tool_choice": []}
    return body


@fault("json-object-rejected", stages.REQUEST, api="chat",
       summary='`response_format: {"type": "json_object"}` is refused 400',
       seen_in="LM Studio 0.3.x to 0.4.x (lmstudio-bug-tracker#307, #189; LoadShine/tada#16, 2026-01)")
def json_object_rejected(body: Any) -> Any:
    response_format = body.get("response_format") if isinstance(body, dict) else None
    if isinstance(response_format, dict) and response_format.get("type") == "json_object":
        return {**body, "response_format": {**response_format, "type": "json_object (unsupported)"}}
    return body


@fault("reasoning-in-content", stages.PLAN, api="chat",
       summary="reasoning is sent inside `content` as `<think>…</think>`, not in a field of its own "
               "(stream and non-stream)",
       seen_in="LM Studio before 0.3.23 for gpt-oss (lmstudio-bug-tracker#894); servers without a reasoning parser")
def reasoning_in_content(plan: Plan) -> Plan:
    if not plan.reasoning:
        return plan
    return replace(plan, text=f"<think>{plan.reasoning}</think>{plan.text}", reasoning=None)


@fault("content-as-reasoning", stages.PLAN, api="chat",
       summary="the whole answer is sent as reasoning; no `content` ever comes (stream and non-stream)",
       seen_in="LM Studio 0.3.9 beta 3 with DeepSeek R1 (lmstudio-bug-tracker#378)")
def content_as_reasoning(plan: Plan) -> Plan:
    if not plan.reasoning:
        return plan
    return replace(plan, text="", reasoning=f"{plan.reasoning} {plan.text}")


@fault("role-repeated", stages.STREAM, api="chat",
       summary='every delta repeats `"role": "assistant"` (stream only)',
       seen_in="LM Studio 0.3.9 beta 3 (lmstudio-bug-tracker#378)")
def role_repeated(lines: list[Line]) -> list[Line]:
    def with_role(chunk: dict[str, Any]) -> dict[str, Any]:
        choices = [{**choice, "delta": {"role": "assistant", **choice["delta"]}} for choice in chunk["choices"]]
        return {**chunk, "choices": choices}

    return _each_chunk(lines, with_role)


@fault("chunk-created-missing", stages.STREAM, api="chat",
       summary="stream chunks carry no `created` and no `model` (stream only)",
       seen_in="hand-written encoders; Zed's LM Studio client requires both (crates/lmstudio/src/lmstudio.rs)")
def chunk_created_missing(lines: list[Line]) -> list[Line]:
    return _each_chunk(lines, lambda chunk: {k: v for k, v in chunk.items() if k not in ("created", "model")})


@fault("usage-every-chunk", stages.STREAM, api="chat",
       summary="with `stream_options.include_usage`, every chunk carries `usage`, not only the last (stream only)",
       seen_in="vLLM 0.5.4 (vllm-project/vllm#7262)")
def usage_every_chunk(lines: list[Line]) -> list[Line]:
    usage = next((line["usage"] for line in lines if isinstance(line, dict) and line.get("usage")), None)
    return lines if usage is None else _each_chunk(lines, lambda chunk: {**chunk, "usage": usage})


@fault("error-swallowed-mid-stream", stages.STREAM, api="chat",
       summary="after the second chunk the stream ends with `data: [DONE]`: no finish reason, no error event "
               "(stream only)",
       seen_in="any-llm gateway (mozilla-ai/any-llm PR#847); goose (aaif-goose/goose PR#8027)")
def error_swallowed(lines: list[Line]) -> list[Line]:
    return [*lines[:2], "[DONE]"]


@fault("stream-error-bare-string", stages.STREAM, api="chat",
       summary='after the second chunk the stream fails with `data: {"error": "<a bare string>"}`, then '
               "`data: [DONE]` (stream only)",
       seen_in="LM Studio before 0.3.18 (its changelog: stream errors in OpenAI's format since 0.3.18); "
               "mlx-based servers (Blaizzy/nativ PR#195)")
def stream_error_bare_string(lines: list[Line]) -> list[Line]:
    return [*lines[:2], {"error": "The model has crashed without additional information. (Exit code: 6)"}, "[DONE]"]


@fault("keepalive-after-event-id", stages.SSE, api="http",
       summary="events carry `id:` lines, and a `: ping` comment block follows the first chunk (stream only)",
       seen_in="theopenco/llmgateway PR#2334 (openai-python#2722 raises JSONDecodeError on it)")
async def keepalive_after_event_id(frames: Frames, stopping: threading.Event) -> Frames:
    number = 0
    async for frame, second_chunk in _marking_second_chunk(frames):
        if second_chunk:
            yield b": ping\n\n"
        number += 1
        yield f"id: {number}\n".encode() + frame


@fault("tool-call-echoed-as-text", stages.PLAN, api="chat",
       summary="the tool call is also sent as `content` text, its JSON before the call (stream and non-stream)",
       seen_in="LocalAI v4.3.3 (mudler/LocalAI#10052); LM Studio 0.4.18 writes calls as text (#2115)")
def tool_call_echoed(plan: Plan) -> Plan:
    echoed = "".join(json.dumps({"name": call.name, "arguments": json.loads(arguments_json(call.arguments))})
                     for call in plan.tool_calls)
    return replace(plan, text=echoed) if echoed else plan


STOP_HANDLING = "stop handling of local servers (mlx-knife#68, mlx-vlm#1044, llama.cpp PR#15007)"


@fault("stop-ignored", stages.REQUEST, api="chat",
       summary="`stop` is ignored: the answer runs past its stop strings (stream and non-stream)", seen_in=STOP_HANDLING)
def stop_ignored(body: Any) -> Any:
    return without(body, "stop") if isinstance(body, dict) else body


@fault("n-ignored", stages.REQUEST, api="chat",
       summary="`n` is ignored: a request asking for two choices gets one (stream and non-stream)",
       seen_in="servers that answer one choice whatever `n` asks (OpenAI's reference: `n` choices to generate)")
def n_ignored(body: Any) -> Any:
    return without(body, "n") if isinstance(body, dict) else body


# The seed each request is sampled with by a server that does not take the request's: a new one every time.
_FRESH_SEEDS = itertools.count(1)


@fault("seed-ignored", stages.REQUEST, api="chat",
       summary="`seed` is ignored: a sampled request (temperature above 0) is sampled with a seed of the server's, "
               "another each time, so the same request sent twice gets two answers (stream and non-stream)",
       seen_in="servers that take `seed` and sample without it (OpenAI's reference: the same seed and parameters "
               "should return the same result)")
def seed_ignored(body: Any) -> Any:
    if not isinstance(body, dict) or body.get("seed") is None:
        return body
    return {**body, "seed": next(_FRESH_SEEDS)}


@fault("stop-flushed-in-stream", stages.STOP, api="chat",
       summary="a stream sends the start of the stop string that ended it, cut into tokens, before it stops "
               "(stream only)", seen_in=STOP_HANDLING)
def stop_flushed_in_stream(stopped: tuple[Plan, str | None], streamed: bool) -> tuple[Plan, str | None]:
    plan, hit = stopped
    if not streamed or hit is None or len(hit) < 3:
        return stopped
    return replace(plan, text=plan.text + hit[:len(hit) - 2]), hit


@fault("stop-finish-length", stages.STOP, api="chat",
       summary='an answer ended by a stop string says finish_reason "length" (stream and non-stream)',
       seen_in=STOP_HANDLING)
def stop_finish_length(stopped: tuple[Plan, str | None], streamed: bool) -> tuple[Plan, str | None]:
    plan, hit = stopped
    return (replace(plan, finish_reason="length"), hit) if hit is not None else stopped


@fault("logprobs-dropped", stages.REQUEST, api="chat",
       summary="`logprobs` is silently dropped: the answer carries `logprobs: null` (stream and non-stream)",
       seen_in="llama.cpp#28478 (logprobs lost with tools or streams on)")
def logprobs_dropped(body: Any) -> Any:
    return without(body, "logprobs", "top_logprobs") if isinstance(body, dict) else body


@fault("logprobs-malformed", stages.LOGPROBS, api="chat",
       summary="each token's log probability comes without its `top_logprobs` list (stream and non-stream)",
       seen_in="llama.cpp#28478 (logprobs malformed with tools or streams on)")
def logprobs_malformed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [without(entry, "top_logprobs") for entry in entries]


@fault("top-logprobs-short", stages.LOGPROBS, api="chat",
       summary="each token brings one alternative fewer than `top_logprobs` asked for (stream and non-stream)",
       seen_in="InternLM/lmdeploy#1548 (top_logprobs 5 answered with 4 alternatives a token)")
def top_logprobs_short(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**entry, "top_logprobs": entry["top_logprobs"][:-1]} for entry in entries]


@fault("logprobs-tokens-mismatch", stages.LOGPROBS, api="chat",
       summary="the tokens of the log probabilities lose their spaces: put together they are not the text "
               "(stream and non-stream)",
       seen_in="servers that send each token detokenized on its own (llama.cpp#28478)")
def logprobs_tokens_mismatch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**entry, "token": entry["token"].strip()} for entry in entries]


@fault("usage-total-wrong", stages.OBJECT, api="chat",
       summary="usage.total_tokens is not prompt_tokens + completion_tokens (stream and non-stream)",
       seen_in="the sum LiteLLM's tests assert of every provider (in the BerriAI/litellm repository)")
def usage_total_wrong(rendered: dict[str, Any]) -> dict[str, Any]:
    usage = rendered.get("usage")
    if not isinstance(usage, dict):
        return rendered
    return {**rendered, "usage": {**usage, "total_tokens": usage["total_tokens"] + 1}}


@fault("stream-argument-dropped", stages.TOOL_CALL_DELTAS, api="chat",
       summary="a streamed tool call loses the last key of its arguments; the body's keeps it (stream only)",
       seen_in="streaming tool parsers that close the arguments object early (python-genai#2868: a stream that "
               "tells another story than the body)")
def stream_argument_dropped(calls: list[list[Entry]]) -> list[list[Entry]]:
    def shortened(opening: Entry, rest: list[Entry]) -> list[Entry]:
        arguments = json.loads("".join(entry["function"]["arguments"] for entry in rest) or "{}")
        kept = dict(list(arguments.items())[:-1]) if isinstance(arguments, dict) else arguments
        return [_with_arguments(opening, json.dumps(kept, separators=(",", ":")))]

    return [shortened(opening, rest) for opening, *rest in calls]


@fault("stream-finish-differs", stages.STREAM, api="chat",
       summary='a streamed tool call ends with finish_reason "stop" where the body says "tool_calls" (stream only)',
       seen_in="python-genai#2868 (the finish reason of a stream differs from the body's)")
def stream_finish_differs(lines: list[Line]) -> list[Line]:
    def finished(chunk: dict[str, Any]) -> dict[str, Any]:
        return {**chunk, "choices": [{**choice, "finish_reason": "stop"} if choice.get("finish_reason") == "tool_calls"
                                     else choice for choice in chunk["choices"]]}

    return _each_chunk(lines, finished)



STRUCTURED_OUTPUT_OFF_SCHEMA = flag(
    "structured-output-off-schema", api="chat",
    summary="a `json_schema` response format and strict tools are accepted and not enforced: the answer and the "
            "calls' arguments break the schema (a keyword no decoder honours is accepted too)",
    seen_in="Ollama (ollama#8063), pydantic-ai users' servers (pydantic-ai#4917), LM Studio (lmstudio-bug-tracker#1396)")

SCHEMA_BOUNDS_DROPPED = flag(
    "schema-bounds-dropped", api="chat",
    summary="a schema's bounds (minimum, exclusiveMaximum, maxLength, minItems, minProperties…) are dropped "
            "silently: answers break them while the rest of the schema holds",
    seen_in="grammar converters that drop keywords (xgrammar#104, outlines-core#261); llama-server b11669 "
            "(exclusiveMinimum, minProperties)")
