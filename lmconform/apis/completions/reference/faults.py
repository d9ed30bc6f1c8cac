"""The faults of `POST /v1/completions`: what the door does with the request's options (echo, logprobs, stop), the
finish reason it gives, and the shape of its chunks and body. Most are slips of a server that renders this old API
with its chat code, or drops the options its engine does not take."""

from __future__ import annotations

from typing import Any

from lmconform.apis.completions.reference import stages
from lmconform.reference.faults.edits import without
from lmconform.reference.faults.registry import fault, flag

JsonObject = dict[str, Any]

STOP_INCLUDED = flag(
    "completions-stop-included", api="completions",
    summary="a stop sequence that ends the text is kept at its end, not cut off (stream and non-stream)",
    seen_in="servers that stop after the stop sequence is generated and return what was generated")


def _each_choice(rendered: JsonObject, change) -> JsonObject:
    choices = rendered.get("choices")
    if not isinstance(choices, list):
        return rendered
    return {**rendered, "choices": [change(choice) if isinstance(choice, dict) else choice for choice in choices]}


@fault("completions-echo-ignored", stages.REQUEST, api="completions",
       summary="`echo: true` is ignored: the text is the completion alone, without the prompt before it",
       seen_in="servers whose engine returns only what it generated")
def echo_ignored(body: JsonObject) -> JsonObject:
    return without(body, "echo")


@fault("completions-logprobs-dropped", stages.REQUEST, api="completions",
       summary="`logprobs: N` is dropped: every choice's `logprobs` is null",
       seen_in="servers that take only the chat API's `logprobs: true`")
def logprobs_dropped(body: JsonObject) -> JsonObject:
    return without(body, "logprobs")


@fault("completions-finish-stop-at-max-tokens", stages.TEXT, api="completions",
       summary='a text cut at `max_tokens` ends with finish_reason "stop", not "length" (stream and non-stream)',
       seen_in="servers that report every end of generation as a stop")
def finish_stop_at_max_tokens(ending: tuple[str, str | None]) -> tuple[str, str | None]:
    text, reason = ending
    return text, "stop" if reason == "length" else reason


@fault("completions-object-chat", stages.OBJECT, api="completions",
       summary='chunks say `"object": "chat.completion.chunk"` and the body `"chat.completion"`',
       seen_in="not seen yet: the slip of a server that renders this API with its chat code")
def object_chat(rendered: JsonObject, streamed: bool) -> JsonObject:
    return {**rendered, "object": "chat.completion.chunk" if streamed else "chat.completion"}


@fault("completions-index-missing", stages.OBJECT, api="completions",
       summary="choices carry no `index` (stream and non-stream)",
       seen_in="hand-written completions endpoints that only ever return one choice")
def index_missing(rendered: JsonObject, streamed: bool) -> JsonObject:
    return _each_choice(rendered, lambda choice: without(choice, "index"))


@fault("completions-id-missing", stages.OBJECT, api="completions",
       summary="chunks and the body carry no `id` (stream and non-stream)",
       seen_in="hand-written completions endpoints")
def id_missing(rendered: JsonObject, streamed: bool) -> JsonObject:
    return without(rendered, "id")


@fault("completions-logprobs-omitted", stages.OBJECT, api="completions",
       summary="a choice without log probabilities leaves `logprobs` out rather than sending null",
       seen_in="servers that serialise with exclude_none")
def logprobs_omitted(rendered: JsonObject, streamed: bool) -> JsonObject:
    return _each_choice(rendered, lambda choice: choice if choice.get("logprobs") else without(choice, "logprobs"))


@fault("completions-delta-instead-of-text", stages.CHUNKS, api="completions",
       summary="streamed chunks carry their piece as a chat delta (`delta.content`), not as `text` (stream only)",
       seen_in="not seen yet: the slip of a server that streams this API with its chat code")
def delta_instead_of_text(chunks: list[JsonObject]) -> list[JsonObject]:
    def as_delta(choice: JsonObject) -> JsonObject:
        return {**without(choice, "text"), "delta": {"content": choice.get("text", "")}}

    return [_each_choice(chunk, as_delta) for chunk in chunks]
