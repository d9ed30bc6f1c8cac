"""Faults of `POST /v1/responses/compact` and `POST /v1/responses/input_tokens`, which Codex calls to compact a long
transcript and to count its context: a count short of what the same request is charged, a compaction answered with an
ordinary response, the compaction item sent back on the next turn answered 500 or taken and forgotten. And LM Studio's
answer, which offers neither route, and a server that refuses the item naming it: limits, no defects."""

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

COMPACTION_INPUT_REFUSED = flag(
    "compaction-input-refused", api="responses", variant=True,
    summary="a `compaction` input item (the output of `POST /v1/responses/compact` sent back) is refused 400 at "
            "`input.N.type`, naming the item",
    seen_in="servers whose input schema predates compaction items")

COMPACTION_INPUT_500 = flag(
    "compaction-input-500", api="responses",
    summary="a request whose input holds a `compaction` item is answered 500",
    seen_in="servers that map each input item to a chat message and raise on a type they do not know")

COMPACTION_INPUT_FORGOTTEN = flag(
    "compaction-input-forgotten", api="responses",
    summary="a `compaction` input item is accepted and dropped: the answer is made without the history it stands for",
    seen_in="servers that skip the input items they cannot render (as reasoning items are skipped)")
