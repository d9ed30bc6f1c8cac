"""`/v1/responses` response objects (the body, or the stream's terminal event's): the fields clients require,
the status of an answer cut at its cap, and `tool_choice: "required"`."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.responses.checks.scope import responses_answer, responses_tool_choice_required
from lmconform.apis.responses.checks.views import final_response
from lmconform.checks.observed import Observed, output_cap
from lmconform.checks.refs import (
    LMSTUDIO_ANNOTATIONS,
    LMSTUDIO_RESPONSES_TOOLS_OMITTED,
    OPENAI_RESPONSES_CREATE,
    VLLM_RESPONSES_MAX_TOKENS,
)
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Note

# What typed clients cannot do without: rig deserialises `tools` as a required list, the Vercel AI SDK's schema
# requires the rest. Open Responses requires more (`text`, `truncation`, …); the schema checks judge those.
REQUIRED_FIELDS = (("id", str), ("object", str), ("created_at", int), ("status", str), ("model", str),
                   ("output", list), ("tools", list))


def _response(observed: Observed) -> dict:
    observed.require_success()
    response = final_response(observed)
    if not response:
        raise NotApplicable("no response object: neither a JSON body nor a terminal event")
    return response


@check("responses.body.resource_fields_present", level=Level.MUST, applies=responses_answer,
       ref=LMSTUDIO_RESPONSES_TOOLS_OMITTED,
       title="the response object has `id`, `object`, `created_at`, `status`, `model`, `output` and `tools`",
       proven_by=("responses-tools-omitted",))
def resource_fields_present(observed: Observed) -> Iterator[Failure]:
    # MUST: rig failed to read LM Studio 0.3.29's responses, which left out `tools` when none were given.
    response = _response(observed)
    missing = [name for name, kind in REQUIRED_FIELDS if not isinstance(response.get(name), kind)]
    if missing:
        yield Failure(", ".join(name for name, _ in REQUIRED_FIELDS), f"without {', '.join(missing)}",
                      json.dumps({key: response.get(key) for key in missing})[:200])


@check("responses.body.output_text_annotations", level=Level.MUST, applies=responses_answer,
       ref=LMSTUDIO_ANNOTATIONS, title="every `output_text` part carries an `annotations` list",
       proven_by=("annotations-missing",))
def output_text_annotations(observed: Observed) -> Iterator[Failure]:
    # MUST: the Vercel AI SDK's schema requires it; ElizaOS got "Invalid JSON response" from LM Studio 0.3.30.
    for position, item in enumerate(_response(observed).get("output") or []):
        parts = item.get("content") if isinstance(item, dict) and item.get("type") == "message" else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "output_text" \
                    and not isinstance(part.get("annotations"), list):
                yield Failure('"annotations": [] on the part', f"output[{position}] part without annotations",
                              json.dumps(part)[:200])
                return


@check("responses.status.incomplete_at_max_output_tokens", level=Level.SHOULD, applies=responses_answer,
       ref=VLLM_RESPONSES_MAX_TOKENS,
       title='a response that used up `max_output_tokens` is `incomplete`, for reason "max_output_tokens"',
       proven_by=("completed-when-truncated",))
def incomplete_at_max_output_tokens(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients tell a cut answer from a finished one by it; vLLM's suite asserts it.
    response = _response(observed)
    cap = output_cap(observed.request_body, "max_output_tokens")
    usage = response.get("usage")
    used = usage.get("output_tokens") if isinstance(usage, dict) else None
    if cap is None or not isinstance(used, int) or used < cap:
        raise NotApplicable("the answer did not reach the request's max_output_tokens")
    details = response.get("incomplete_details")
    details = details if isinstance(details, dict) else {}
    if response.get("status") != "incomplete" or details.get("reason") != "max_output_tokens":
        yield Failure(f'status "incomplete", reason "max_output_tokens" ({used} of {cap} tokens used)',
                      f"status {response.get('status')!r}, incomplete_details {response.get('incomplete_details')!r}",
                      json.dumps({key: response.get(key) for key in ("status", "incomplete_details", "usage")})[:300])


@check("responses.tool_choice.required_honoured_or_refused", level=Level.MUST, applies=responses_tool_choice_required,
       ref=OPENAI_RESPONSES_CREATE, title='`tool_choice: "required"` is answered with a function call, or refused 4xx',
       proven_by=("responses-tool-choice-ignored",))
def required_honoured_or_refused(observed: Observed) -> Iterator[Failure | Note]:
    # MUST: an agent that forces a call and gets text has no next step; a refusal (as vLLM's harmony path gives)
    # at least tells it so.
    exchange = observed.exchange
    status = exchange.status or 0
    if 400 <= status < 500:
        yield Note(f"refused with HTTP {status}: {exchange.body_excerpt(200)}")
    elif not observed.succeeded:
        yield Failure("a function call or a 4xx refusal", f"HTTP {status}", exchange.body_excerpt())
    elif not observed.generation.tool_calls():
        yield Failure("a function_call output item", "HTTP 200 without one: the choice was ignored",
                      exchange.body_excerpt(400))
