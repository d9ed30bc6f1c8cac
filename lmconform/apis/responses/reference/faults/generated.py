"""The fault of the Responses API only generated requests find: it hides behind a form of request no written or
recorded case sends (a `tool_choice` naming a tool that is not offered), and drops that rule of validation."""

from __future__ import annotations

from lmconform.reference.faults.registry import flag

UNKNOWN_TOOL_CHOICE_ACCEPTED = flag(
    "unknown-tool-choice-accepted", api="responses",
    summary="a Responses tool_choice naming a function that is not among the tools is answered 200",
    seen_in="vllm tool_use/test_responses_request_validations.py: a named tool_choice not in tools is an error", generated_only=True)

