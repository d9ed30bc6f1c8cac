"""Variants of the Responses API: valid forms that real servers send differently from OpenAI, served like faults so
that the whole suite can be run against each. None is a defect: a check that reports one above INFO raises a false
alarm, and tests/test_fault_catalogue.py holds every check to that.
"""

from __future__ import annotations

from typing import Any

from lmconform.apis.responses.reference import stages
from lmconform.reference.faults.registry import variant

Event = dict[str, Any]


@variant("responses-telemetry", stages.EVENTS, api="responses",
         summary="Responses events carry llama.cpp's extra top-level `timings` and `prompt_progress` keys "
                 "(stream only)",
         seen_in="llama.cpp's llama-server (test_compat_oai_responses.py telemetry test)")
def responses_telemetry(events: list[Event]) -> list[Event]:
    return [{**event, "timings": {"predicted_n": 1}, "prompt_progress": {"total": 5, "processed": 5}}
            for event in events]

@variant("done-after-completed", stages.SSE, api="responses",
         summary="a Responses stream ends with `data: [DONE]` after its terminal event (stream only)",
         seen_in="LiteLLM proxy 1.106.2 (fixtures/targets/litellm-reference.toml); Open Responses skips it")
def done_after_completed(frames: list[bytes]) -> list[bytes]:
    return [*frames, b"data: [DONE]\n\n"]
