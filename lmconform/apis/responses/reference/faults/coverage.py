"""Faults of `POST /v1/responses` that LM Studio's users, other servers' users and the anchor suites (vLLM's
Responses tests, the Open Responses compliance suite) reported. Four are flags asked about in
lmconform.apis.responses.reference.validation, where each adds one rule to LM Studio's order of Zod issues.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse, Response

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.edits import without
from lmconform.reference.faults.registry import fault, flag

Event = dict[str, Any]

MULTI_ITEM_INPUT_REJECTED = flag(
    "multi-item-input-rejected", api="responses",
    summary="an `input` list of more than one item is refused 400",
    seen_in="LM Studio 0.3.29 (lmstudio-bug-tracker#1064)")

TEXT_FORMAT_REQUIRED = flag(
    "text-format-required", api="responses",
    summary='`text` without `format` is refused 400 "Required" at `text.format`',
    seen_in="LM Studio 0.4.5 (lmstudio-bug-tracker#1576; n8n, LibreChat)")

EMPTY_PARAMETERS_REJECTED = flag(
    "empty-parameters-rejected", api="responses",
    summary='a function tool with `"parameters": {}` is refused 400 "Invalid input" at `tools.<i>`',
    seen_in="LM Studio 0.4.20+1 (lmstudio-bug-tracker#2254; VS Code's BYOK agent mode)")

STRUCTURED_OUTPUT_IGNORED = flag(
    "structured-output-ignored", api="responses",
    summary="`text.format` json_schema is accepted and ignored: the answer is plain text",
    seen_in="LM Studio 0.3.39 build 2 (lmstudio-bug-tracker#1396), 0.4.23+1 (#2403)")

RESPONSES_OUTPUT_OFF_SCHEMA = flag(
    "responses-output-off-schema", api="responses",
    summary="`text.format` json_schema and strict function tools are not enforced: the JSON answer and the calls' "
            "arguments break the schema",
    seen_in="servers whose Responses layer passes the schema to no decoder (lmstudio-bug-tracker#1396, #2403)")


@fault("responses-tools-omitted", stages.OBJECT, api="responses",
       summary="a response to a request without tools has no `tools` key (stream and non-stream)",
       seen_in="LM Studio 0.3.29 (lmstudio-bug-tracker#1174; rig PR#1021)")
def responses_tools_omitted(response: dict[str, Any]) -> dict[str, Any]:
    return response if response.get("tools") else {k: v for k, v in response.items() if k != "tools"}


@fault("annotations-missing", stages.OBJECT, api="responses",
       summary="`output_text` parts have no `annotations` list (stream and non-stream)",
       seen_in="LM Studio 0.3.30 (lmstudio-bug-tracker#1089; ElizaOS, the Vercel AI SDK's schema)")
def annotations_missing(response: dict[str, Any]) -> dict[str, Any]:
    def part(value: Any) -> Any:
        return {k: v for k, v in value.items() if k != "annotations"} if isinstance(value, dict) else value

    output = [{**item, "content": [part(value) for value in item["content"]]} if item["type"] == "message" else item
              for item in response["output"]]
    return {**response, "output": output}


@fault("completed-when-truncated", stages.OBJECT, api="responses",
       summary='a response cut at `max_output_tokens` says `status: "completed"` (stream and non-stream)',
       seen_in="vLLM's Responses tests assert incomplete (responses/test_simple.py::test_max_tokens)")
def completed_when_truncated(response: dict[str, Any]) -> dict[str, Any]:
    return {**response, "status": "completed", "incomplete_details": None}


@fault("responses-tool-choice-ignored", stages.REQUEST, api="responses",
       summary='`tool_choice` is dropped: "required" answers without a call when the prompt asks for none',
       seen_in="servers that accept the field without honouring it (vLLM's harmony path refuses it instead)")
def responses_tool_choice_ignored(body: Any) -> Any:
    return {k: v for k, v in body.items() if k != "tool_choice"} if isinstance(body, dict) else body


@fault("content-part-added-missing", stages.EVENTS, api="responses",
       summary="text deltas come without `response.content_part.added` before them (stream only)",
       seen_in="hand-written Responses encoders; vLLM's event-stack validator (responses/conftest.py) forbids it")
def content_part_added_missing(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "response.content_part.added"]


@fault("text-event-index-missing", stages.EVENTS, api="responses",
       summary="text events (`output_text.*`, `content_part.*`) carry no `output_index` and no `content_index` "
               "(stream only)",
       seen_in="llama.cpp's llama-server b11669")
def text_event_index_missing(events: list[Event]) -> list[Event]:
    def located(event: Event) -> bool:
        return event["type"].startswith(("response.output_text.", "response.content_part."))

    return [{k: v for k, v in event.items() if k not in ("output_index", "content_index")} if located(event)
            else event for event in events]


@fault("delta-logprobs-missing", stages.EVENTS, api="responses",
       summary="`response.output_text.delta` events carry no `logprobs` list (stream only)",
       seen_in="LiteLLM 2026-05 (BerriAI/litellm PR#28899); Open Responses requires the list")
def delta_logprobs_missing(events: list[Event]) -> list[Event]:
    return [{k: v for k, v in event.items() if k != "logprobs"} if event["type"] == "response.output_text.delta"
            else event for event in events]


@fault("responses-error-string", stages.REFUSAL, api="responses",
       summary='a refused Responses request gets `{"error": "<message>"}`, a bare string, not an error object',
       seen_in="mlx-based servers (Blaizzy/nativ PR#195); LM Studio's chat endpoint answers so (#670)")
def responses_error_string(refusal: Response) -> Response:
    message = json.loads(bytes(refusal.body))["error"]["message"]
    return JSONResponse({"error": message}, status_code=refusal.status_code)


@fault("responses-logprobs-dropped", stages.REQUEST, api="responses",
       summary='`include: ["message.output_text.logprobs"]` is ignored: the output text\'s `logprobs` stay empty '
               "(stream and non-stream)",
       seen_in="servers that accept `include` and act on none of it")
def logprobs_dropped(body: Any) -> Any:
    return without(body, "include") if isinstance(body, dict) else body


@fault("stored-before-done", stages.STORED, api="responses",
       summary="the stored response is the one of its start: in_progress, with no output, whatever was answered",
       seen_in="servers that store a response when it is created and never update it")
def stored_before_done(response: dict[str, Any]) -> dict[str, Any]:
    return {**response, "status": "in_progress", "output": [], "completed_at": None}
