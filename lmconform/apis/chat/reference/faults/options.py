"""The faults of what a chat request's options ask (`stop`, `logprobs`, usage) and of a stream that tells another
story than the body: each breaks one promise of the OpenAI reference, in the stream, the body or both."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from lmconform.apis.chat.reference import stages
from lmconform.apis.chat.reference.faults.defects import Entry, Line, _each_chunk, _with_arguments
from lmconform.reference.faults.edits import without
from lmconform.reference.faults.registry import fault
from lmconform.reference.model import Plan

STOP_HANDLING = "stop handling of local servers (mlx-knife#68, mlx-vlm#1044, llama.cpp PR#15007)"


@fault("stop-ignored", stages.REQUEST, api="chat",
       summary="`stop` is ignored: the answer runs past its stop strings (stream and non-stream)", seen_in=STOP_HANDLING)
def stop_ignored(body: Any) -> Any:
    return without(body, "stop") if isinstance(body, dict) else body


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
