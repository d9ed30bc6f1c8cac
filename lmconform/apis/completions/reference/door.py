"""`POST /v1/completions`, legacy text completions, as OpenAI documents them: the prompt (and, for fill-in-the-middle,
the `suffix` after it) read by the model of lmconform.reference.model, its answer cut at the first stop sequence or at
`max_tokens`, the prompt put before it with `echo`, each token's log probabilities with `logprobs`, and the whole
rendered as one `text_completion` body or as a stream of them ending with `data: [DONE]`.

`completions` reads as the order in which an answer is made; each `apply` there is the one place where the faults of
that stage (lmconform.apis.completions.reference.faults) change it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lmconform.apis.completions import API
from lmconform.apis.completions.reference import stages
from lmconform.apis.completions.reference.faults import STOP_INCLUDED
from lmconform.reference.faults.registry import apply
from lmconform.reference.model import Plan, capped, compact_json, decide, first_stop, request_seed, stop_strings
from lmconform.reference.refusal import refusal_message, schema_refusal
from lmconform.reference.wire import DEFAULT_MODEL, SSE_HEADERS, reject_json_constant

PIECES = re.compile(r"\S+\s*|\s+")  # a token, as the reference model counts them: a word with its spaces
MAX_LOGPROBS = 5


class Refused(Exception):
    """An invalid request: a 400 with OpenAI's error object naming the parameter."""

    def __init__(self, message: str, param: str | None) -> None:
        super().__init__(message)
        self.param = param

    def response(self) -> JSONResponse:
        error = {"message": str(self), "type": "invalid_request_error", "param": self.param, "code": None}
        return JSONResponse({"error": error}, status_code=400)


async def completions(request: Request, faults: frozenset[str]) -> Response:
    try:
        body = validated(await request.body())
        broken = schema_refusal(API.name, body, faults)
        if broken is not None:
            raise Refused(refusal_message(broken), broken.pointer.lstrip("/").replace("/", ".") or None)
    except Refused as refused:
        return refused.response()
    body = apply(stages.REQUEST, faults, body)
    prompt = body["prompt"] if isinstance(body["prompt"], str) else "".join(map(str, body["prompt"]))
    text, finish_reason = apply(stages.TEXT, faults, _answer(body, prompt, STOP_INCLUDED in faults))
    counts = _usage(prompt, text)  # the tokens generated: an echoed prompt is no completion token
    if body.get("echo") is True:
        text = prompt + text
    envelope = {"id": f"cmpl-{request_seed(body)}", "created": int(time.time()),
                "model": body["model"] if body.get("model") else DEFAULT_MODEL, "system_fingerprint": DEFAULT_MODEL}
    pieces = PIECES.findall(text)
    logprobs = body.get("logprobs") if isinstance(body.get("logprobs"), int) else None
    if body.get("stream") is not True:
        choice = _choice(text, finish_reason, _logprobs(pieces, logprobs, 0))
        rendered = {**envelope, "object": "text_completion", "choices": [choice], "usage": counts}
        return JSONResponse(apply(stages.OBJECT, faults, rendered, False))
    chunks, offset = [], 0
    for piece in pieces:
        chunks.append({**envelope, "object": "text_completion",
                       "choices": [_choice(piece, None, _logprobs([piece], logprobs, offset))]})
        offset += len(piece)
    chunks.append({**envelope, "object": "text_completion", "choices": [_choice("", finish_reason, None)]})
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        chunks.append({**envelope, "object": "text_completion", "choices": [], "usage": counts})
    chunks = apply(stages.CHUNKS, faults, [apply(stages.OBJECT, faults, chunk, True) for chunk in chunks])
    return StreamingResponse(_sent([*map(compact_json, chunks), "[DONE]"]), headers=SSE_HEADERS)


def validated(raw: bytes) -> dict[str, Any]:
    """The request, or Refused naming what is wrong with it."""
    try:
        body = json.loads(raw, parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        raise Refused("The body is not JSON", None) from None
    if not isinstance(body, dict):
        raise Refused("The body must be a JSON object", None)
    prompt = body.get("prompt")
    if prompt is None:
        raise Refused("'prompt' is required", "prompt")
    if not (isinstance(prompt, str) or isinstance(prompt, list) and all(isinstance(item, str) for item in prompt)):
        raise Refused("'prompt' must be a string or an array of strings", "prompt")
    for name, kind in (("suffix", str), ("echo", bool), ("stream", bool)):
        if body.get(name) is not None and not isinstance(body[name], kind):
            raise Refused(f"'{name}' must be a {kind.__name__}", name)
    logprobs = body.get("logprobs")
    if logprobs is not None and (not isinstance(logprobs, int) or isinstance(logprobs, bool)
                                 or not 0 <= logprobs <= MAX_LOGPROBS):
        raise Refused(f"'logprobs' must be an integer from 0 to {MAX_LOGPROBS}", "logprobs")
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or isinstance(stop, list)
                                 and all(isinstance(item, str) for item in stop)):
        raise Refused("'stop' must be a string or an array of strings", "stop")
    cap = body.get("max_tokens")
    if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 0):
        raise Refused("'max_tokens' must be a non-negative integer", "max_tokens")
    return body


def _answer(body: dict[str, Any], prompt: str, keep_stop: bool) -> tuple[str, str | None]:
    """The model's text and why it ended: the answer to the prompt (to what goes between the prompt and the suffix,
    for fill-in-the-middle), cut before the first stop sequence in it, then at `max_tokens` words."""
    asked = f"{prompt} … {body['suffix']}" if isinstance(body.get("suffix"), str) else prompt
    text = decide({"messages": [{"role": "user", "content": asked}]}).text
    if prompt and not prompt[-1].isspace():
        text = " " + text  # a continuation of the prompt
    found = first_stop(text, stop_strings(body.get("stop")))
    if found is not None:
        text = text[:found[0] + (len(found[1]) if keep_stop else 0)]
    plan = capped(Plan(text), body.get("max_tokens") or None)  # "length" when cut, "stop" otherwise
    return plan.text, plan.finish_reason


def _choice(text: str, finish_reason: str | None, logprobs: dict[str, Any] | None) -> dict[str, Any]:
    return {"text": text, "index": 0, "logprobs": logprobs, "finish_reason": finish_reason}


def _logprobs(pieces: list[str], asked: int | None, start: int) -> dict[str, Any] | None:
    """The log probabilities of each token, made up but stable: the token itself likeliest, then `asked` - 1 others."""
    if asked is None:
        return None
    offsets, tops = [], []
    for piece in pieces:
        offsets.append(start)
        start += len(piece)
        tops.append({piece: -0.05, **{f"{piece.strip()}{n}": -1.0 - n for n in range(1, asked)}} if asked else None)
    return {"tokens": pieces, "token_logprobs": [-0.05] * len(pieces), "top_logprobs": tops, "text_offset": offsets}


def _usage(prompt: str, text: str) -> dict[str, int]:
    prompt_tokens, completion_tokens = len(prompt.split()), len(text.split())
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


async def _sent(lines: list[str]) -> AsyncIterator[bytes]:
    for line in lines:
        yield b"data: " + line.encode() + b"\n\n"


ROUTES = {(API.method, API.path): completions}
