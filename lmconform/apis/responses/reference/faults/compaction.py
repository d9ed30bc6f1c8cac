"""Faults of `POST /v1/responses/compact` and `POST /v1/responses/input_tokens`, which Codex calls to compact a long
transcript and to count its context: a count short of what the same request is charged, a compaction answered with an
ordinary response. And LM Studio's answer, which offers neither route: a limit, no defect."""

from __future__ import annotations

from lmconform.reference.faults.registry import flag

COMPACTION_NOT_OFFERED = flag(
    "responses-compaction-not-offered", api="responses", variant=True,
    summary="`POST /v1/responses/compact` and `POST /v1/responses/input_tokens` are routes the server does not offer "
            "(404)",
    seen_in="LM Studio 0.4 (its Responses API has neither); llama.cpp's llama-server")

INPUT_TOKENS_LAST_ITEM = flag(
    "input-tokens-last-item", api="responses",
    summary="`POST /v1/responses/input_tokens` counts the last input item alone: less than the same request is "
            "charged",
    seen_in="counting endpoints that tokenise the latest message rather than the rendered prompt")

COMPACT_AS_RESPONSE = flag(
    "compact-as-response", api="responses",
    summary="`POST /v1/responses/compact` is answered 200 with an ordinary response object (a generation), not a "
            "compaction",
    seen_in="servers that route every POST under /v1/responses to the create endpoint")
