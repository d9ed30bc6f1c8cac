"""The faults of `POST /v1/messages`, Anthropic's Messages API: what it accepts, the message it answers with, and
the event stream that carries it. Each says whether it shows in the stream, the non-stream body, or both; most are
defects seen in a real server or proxy on this door (llama.cpp's llama-server, LiteLLM's adapter, LM Studio).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse, Response

from lmconform.apis.messages.reference import fields, stages  # noqa: F401  (fields: its faults registered)
from lmconform.reference.faults.registry import fault, flag
from lmconform.reference.model import prompt_words

Event = dict[str, Any]
Frame = tuple[Any, Event]  # the name an event's SSE `event:` line gives it (None: no such line), and its data

TOOL_RESULT_500 = flag(
    "messages-tool-result-500", api="messages",
    summary="a user turn holding `tool_result` blocks is answered HTTP 500 `api_error`",
    seen_in="servers whose chat template cannot render tool results (mixed tool_result and text turns refused "
            "behind LM Studio's door, free-claude-code PR #979)")

TOOL_INPUT_OFF_SCHEMA = flag(
    "tool-input-off-schema", api="messages",
    summary="a `tool_use` block's `input` breaks the tool's `input_schema`: the schema reaches no decoder",
    seen_in="Anthropic-compatible layers over local servers that pass tools to the chat template only")


SYSTEM_TURN_REFUSED = flag(
    "messages-system-turn-refused", api="messages",
    summary="a system turn among the messages is refused: HTTP 400, `messages.N.role: Input should be 'user' or "
            "'assistant'`",
    seen_in="LM Studio before 0.4.15 and its standalone server llmster 0.0.20 (lmstudio-bug-tracker #2204), vLLM and "
            "proxies translating the Messages API (CLIProxyAPI #3625): Claude Code sends one in its first request")

THINKING_INPUT_REFUSED = flag(
    "messages-thinking-input-refused", api="messages",
    summary="a request whose assistant turn carries a `thinking` block (the previous turn's thinking sent back) is "
            "refused 400",
    seen_in="Anthropic-compatible layers that take text, image and tool blocks only; Claude Code sends thinking "
            "blocks back with its tool results when thinking is on")
THINKING_500 = flag(
    "messages-thinking-500", api="messages", summary="a request with `thinking` enabled gets HTTP 500 `api_error`",
    seen_in="servers that pass the thinking budget to a chat template or engine without it")


def refused_thinking_block(body: dict[str, Any], faults: frozenset[str]) -> str | None:
    """The 400 message under messages-thinking-input-refused, or None."""
    if THINKING_INPUT_REFUSED not in faults:
        return None
    for position, message in enumerate(body.get("messages") or []):
        blocks = message.get("content") if isinstance(message, dict) else None
        for index, block in enumerate(blocks if isinstance(blocks, list) else []):
            if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
                return (f"messages.{position}.content.{index}: Input tag '{block['type']}' found using 'type' does "
                        "not match any of the expected tags: 'text', 'image', 'tool_use', 'tool_result'")
    return None


def thinking_crashes(body: dict[str, Any], faults: frozenset[str]) -> bool:
    thinking = body.get("thinking")
    return THINKING_500 in faults and isinstance(thinking, dict) and thinking.get("type") == "enabled"


def _refusal_parts(refusal: Response) -> tuple[int, str]:
    body = json.loads(bytes(refusal.body))
    error = body.get("error") if isinstance(body, dict) else None
    return refusal.status_code, error.get("message", "") if isinstance(error, dict) else str(error)


@fault("messages-tool-results-dropped", stages.REQUEST, api="messages",
       summary="`tool_result` blocks never reach the model, which answers as if its call were still unanswered",
       seen_in="servers that do not give the chat template the tool results (oMLX PR #789: the model repeats the "
               "same call without end)")
def tool_results_dropped(body: Any) -> Any:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return body
    kept = [{**message, "content": [block for block in message["content"] if not (
                isinstance(block, dict) and block.get("type") == "tool_result")]}
            if isinstance(message, dict) and isinstance(message.get("content"), list) else message
            for message in messages]
    return {**body, "messages": kept}


@fault("messages-max-tokens-defaulted", stages.REQUEST, api="messages",
       summary="a request without `max_tokens` is answered as if it had asked for 4096",
       seen_in="llama.cpp's llama-server")
def max_tokens_defaulted(body: Any) -> Any:
    return {**body, "max_tokens": 4096} if isinstance(body, dict) and "max_tokens" not in body else body


@fault("messages-tool-choice-none-dropped", stages.REQUEST, api="messages",
       summary='`tool_choice` `{"type": "none"}` is dropped, so tools may be called (stream and non-stream)',
       seen_in="llama.cpp's llama-server (server_chat_convert_anthropic_to_oai)")
def tool_choice_none_dropped(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "none":
        return {key: value for key, value in body.items() if key != "tool_choice"}
    return body


@fault("messages-any-read-as-auto", stages.REQUEST, api="messages",
       summary='`tool_choice` `{"type": "any"}` is read as `auto`: a prompt that names no tool gets text',
       seen_in="not seen yet: the slip of an adapter that maps Anthropic's choices onto `auto` and `none` only")
def any_read_as_auto(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "any":
        return {**body, "tool_choice": {**choice, "type": "auto"}}
    return body


@fault("messages-named-tool-not-enforced", stages.REQUEST, api="messages",
       summary='`tool_choice` `{"type": "tool", "name"}` is read as `any`: some tool is called, not the named one',
       seen_in="llama.cpp's llama-server (both map to `required`)")
def named_tool_not_enforced(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "tool":
        kept = {key: value for key, value in choice.items() if key not in ("type", "name")}
        return {**body, "tool_choice": {"type": "any", **kept}}
    return body


@fault("messages-parallel-not-disabled", stages.REQUEST, api="messages",
       summary="`disable_parallel_tool_use: true` is ignored: two tools asked for are both called",
       seen_in="LiteLLM 1.106.2's adapter and llama.cpp's llama-server")
def parallel_not_disabled(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and "disable_parallel_tool_use" in choice:
        kept = {key: value for key, value in choice.items() if key != "disable_parallel_tool_use"}
        return {**body, "tool_choice": kept}
    return body


@fault("messages-error-openai-shape", stages.REFUSAL, api="messages",
       summary='refusals carry OpenAI\'s `{"error": {"message", "type", "code"}}`, not Anthropic\'s '
               '`{"type": "error", "error": {…}}`',
       seen_in="llama.cpp's llama-server")
def error_openai_shape(refusal: Response) -> Response:
    status, message = _refusal_parts(refusal)
    return JSONResponse({"error": {"code": status, "message": message, "type": "invalid_request_error"}}, status)


@fault("messages-bad-request-500", stages.REFUSAL, api="messages",
       summary="a request that deserves a 400 is answered HTTP 500 `api_error`",
       seen_in="llama.cpp's llama-server (a request without `messages`); LM Studio's engine errors "
               "(lmstudio-bug-tracker#2220)")
def bad_request_500(refusal: Response) -> Response:
    _, message = _refusal_parts(refusal)
    return JSONResponse({"type": "error", "error": {"type": "api_error", "message": message}}, 500)


@fault("messages-end-turn-after-tool-use", stages.OBJECT, api="messages",
       summary='`stop_reason` is "end_turn" after tool_use blocks (stream and non-stream)',
       seen_in="LiteLLM#34692 (Claude Code then drops the call)")
def end_turn_after_tool_use(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "stop_reason": "end_turn"} if message.get("stop_reason") == "tool_use" else message


@fault("messages-stop-reason-openai", stages.OBJECT, api="messages",
       summary='`stop_reason` speaks OpenAI\'s words: "stop", "tool_calls", "length" (stream and non-stream)',
       seen_in="hand-written Anthropic adapters over chat completions")
def stop_reason_openai(message: dict[str, Any]) -> dict[str, Any]:
    words = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
    given = message.get("stop_reason")
    return {**message, "stop_reason": words.get(given, given) if isinstance(given, str) else given}


@fault("messages-stop-sequence-as-end-turn", stages.OBJECT, api="messages",
       summary='an answer a stop sequence ended says "end_turn", with the sequence in `stop_sequence` '
               "(stream and non-stream)",
       seen_in="llama.cpp's llama-server")
def stop_sequence_as_end_turn(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "stop_reason": "end_turn"} if message.get("stop_reason") == "stop_sequence" else message


@fault("messages-end-turn-at-max-tokens", stages.OBJECT, api="messages",
       summary='an answer cut by `max_tokens` says "end_turn" (stream and non-stream)',
       seen_in="Anthropic-compatible adapters over chat completions that read every finish_reason but `tool_calls` "
               "as end_turn")
def end_turn_at_max_tokens(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "stop_reason": "end_turn"} if message.get("stop_reason") == "max_tokens" else message


COUNT_TOKENS_MISSING = flag(
    "messages-count-tokens-missing", api="messages",
    summary="`POST /v1/messages/count_tokens` is answered as a route the server does not serve: a 404 in OpenAI's "
            "error shape, not Anthropic's (HTTP 200 with LM Studio's words under unknown-route-200)",
    seen_in="LM Studio (lmstudio-bug-tracker #2055: \"Unexpected endpoint or method\", answered 200); servers with "
            "the Messages API and no count route")


@fault("messages-count-tokens-under", stages.COUNT, api="messages",
       summary="`count_tokens` counts the last message alone: fewer `input_tokens` than the same request is answered "
               "with",
       seen_in="proxies that estimate the count from the newest message instead of the whole request")
def count_tokens_under(count: int, messages: list[dict[str, Any]]) -> int:
    return prompt_words(messages[-1:])


@fault("messages-usage-missing", stages.OBJECT, api="messages",
       summary="no `usage`: neither in the message nor in `message_start` and `message_delta` (stream and "
               "non-stream)",
       seen_in="minimal Anthropic adapters")
def usage_missing(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "usage"}


@fault("messages-stop-sequence-omitted", stages.OBJECT, api="messages",
       summary="a null `stop_sequence` is left out: of the message, of message_start and of message_delta (stream and "
               "non-stream)",
       seen_in="Anthropic adapters written in Go, whose `stop_sequence` is `omitempty`")
def stop_sequence_omitted(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("stop_sequence") is not None:
        return message
    return {key: value for key, value in message.items() if key != "stop_sequence"}


@fault("messages-type-missing", stages.OBJECT, api="messages",
       summary='the message has no `"type": "message"` (stream and non-stream)',
       seen_in="adapters that copy an OpenAI body's fields")
def type_missing(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "type"}


@fault("messages-tool-use-incomplete", stages.OBJECT, api="messages",
       summary="tool_use blocks have no `id` (stream and non-stream)",
       seen_in="servers that map tool calls to blocks by hand")
def tool_use_incomplete(message: dict[str, Any]) -> dict[str, Any]:
    content = [{key: value for key, value in block.items() if key != "id"} if block.get("type") == "tool_use"
               else block for block in message["content"]]
    return {**message, "content": content}


@fault("messages-thinking-signature-missing", stages.OBJECT, api="messages",
       summary="thinking blocks carry no `signature`, and their stream no `signature_delta`",
       seen_in="llama.cpp's llama-server before PR #18551")
def thinking_signature_missing(message: dict[str, Any]) -> dict[str, Any]:
    content = [{key: value for key, value in block.items() if key != "signature"} if block.get("type") == "thinking"
               else block for block in message["content"]]
    return {**message, "content": content}


@fault("messages-content-as-string", stages.BODY, api="messages",
       summary="a text-only message's `content` is its text as one string, not a list of blocks (non-stream only)",
       seen_in="adapters that copy an OpenAI message's content")
def content_as_string(message: dict[str, Any]) -> dict[str, Any]:
    blocks = message.get("content") or []
    if blocks and all(block.get("type") == "text" for block in blocks):
        return {**message, "content": "".join(block["text"] for block in blocks)}
    return message


@fault("messages-no-message-start", stages.EVENTS, api="messages",
       summary="the stream has no `message_start` (stream only)",
       seen_in="hand-written Anthropic encoders")
def no_message_start(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "message_start"]


@fault("messages-no-message-stop", stages.EVENTS, api="messages",
       summary="the stream ends without `message_stop` (stream only)",
       seen_in="servers that end the stream at message_delta")
def no_message_stop(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "message_stop"]


@fault("messages-start-with-content", stages.EVENTS, api="messages",
       summary="`message_start` already lists the first block, which `content_block_start` then opens again "
               "(stream only)",
       seen_in="encoders that send the message snapshot they have so far")
def start_with_content(events: list[Event]) -> list[Event]:
    first = next((event["content_block"] for event in events if event["type"] == "content_block_start"), None)
    return [{**event, "message": {**event["message"], "content": [first]}}
            if event["type"] == "message_start" and first is not None else event for event in events]


@fault("messages-block-index-from-one", stages.EVENTS, api="messages",
       summary="content blocks are numbered from 1 (stream only)",
       seen_in="LiteLLM's Responses adapter (an index of -1 before any start); servers that count from 1")
def block_index_from_one(events: list[Event]) -> list[Event]:
    return [{**event, "index": event["index"] + 1} if "index" in event else event for event in events]


@fault("messages-block-not-stopped", stages.EVENTS, api="messages",
       summary="the last content block gets no `content_block_stop` (stream only)",
       seen_in="encoders that close only the blocks they finish early")
def block_not_stopped(events: list[Event]) -> list[Event]:
    last = max((position for position, event in enumerate(events) if event["type"] == "content_block_stop"),
               default=None)
    return [event for position, event in enumerate(events) if position != last]


@fault("messages-blocks-overlap", stages.EVENTS, api="messages",
       summary="every `content_block_stop` is sent at the end, after all the blocks' deltas (stream only)",
       seen_in="llama.cpp's llama-server (its final result carries every stop)")
def blocks_overlap(events: list[Event]) -> list[Event]:
    stops = [event for event in events if event["type"] == "content_block_stop"]
    kept = [event for event in events if event["type"] != "content_block_stop"]
    closing = next(position for position, event in enumerate(kept) if event["type"] == "message_delta")
    return [*kept[:closing], *stops, *kept[closing:]]


@fault("messages-delta-type-mismatch", stages.EVENTS, api="messages",
       summary="a text block's deltas come as `thinking_delta` (stream only)",
       seen_in="LiteLLM#32357 (the anthropic SDK drops them: empty content)")
def delta_type_mismatch(events: list[Event]) -> list[Event]:
    def changed(event: Event) -> Event:
        delta = event.get("delta") or {}
        if event["type"] == "content_block_delta" and delta.get("type") == "text_delta":
            return {**event, "delta": {"type": "thinking_delta", "thinking": delta["text"]}}
        return event

    return [changed(event) for event in events]


@fault("messages-partial-json-cumulative", stages.EVENTS, api="messages",
       summary="each `input_json_delta` re-sends all of the tool input so far (stream only)",
       seen_in="LiteLLM passing cumulative upstream fragments through")
def partial_json_cumulative(events: list[Event]) -> list[Event]:
    so_far: dict[int, str] = {}

    def changed(event: Event) -> Event:
        delta = event.get("delta") or {}
        if event["type"] == "content_block_delta" and delta.get("type") == "input_json_delta":
            so_far[event["index"]] = so_far.get(event["index"], "") + delta["partial_json"]
            return {**event, "delta": {**delta, "partial_json": so_far[event["index"]]}}
        return event

    return [changed(event) for event in events]


@fault("messages-tool-start-without-input", stages.EVENTS, api="messages",
       summary="a tool_use block's `content_block_start` has no `input` key (stream only)",
       seen_in="llama.cpp's llama-server")
def tool_start_without_input(events: list[Event]) -> list[Event]:
    def changed(event: Event) -> Event:
        block = event.get("content_block") or {}
        if event["type"] == "content_block_start" and block.get("type") == "tool_use":
            return {**event, "content_block": {key: value for key, value in block.items() if key != "input"}}
        return event

    return [changed(event) for event in events]


@fault("messages-error-event-mid-stream", stages.EVENTS, api="messages",
       summary="an `overloaded_error` event after the last delta, and the stream goes on to message_stop "
               "(stream only)",
       seen_in="proxies that report an upstream hiccup and carry on")
def error_event_mid_stream(events: list[Event]) -> list[Event]:
    last = max(position for position, event in enumerate(events) if event["type"] == "content_block_delta")
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return [*events[:last + 1], error, *events[last + 1:]]


@fault("messages-event-name-missing", stages.FRAMES, api="messages",
       summary="events have a `data:` line but no `event:` line (stream only)",
       seen_in="OpenAI-style SSE encoders reused for Anthropic streams")
def event_name_missing(frames: list[Frame]) -> list[Frame]:
    return [(None, data) for _, data in frames]


@fault("messages-thinking-in-text", stages.OBJECT, api="messages",
       summary="the thinking comes as `<think>…</think>` at the start of the text block, with no thinking block "
               "(stream and non-stream)",
       seen_in="adapters that map a chat completion's content onto text blocks without a reasoning parser")
def thinking_in_text(message: dict[str, Any]) -> dict[str, Any]:
    thoughts = [block["thinking"] for block in message["content"] if block.get("type") == "thinking"]
    if not thoughts:
        return message
    content = [{**block, "text": f"<think>{' '.join(thoughts)}</think>{block['text']}"}
               if block.get("type") == "text" else block for block in message["content"] if block.get("type") != "thinking"]
    return {**message, "content": content}
