"""The faults of `POST /v1/messages`, Anthropic's Messages API: what it accepts, the message it answers with, and
the event stream that carries it. Each says whether it shows in the stream, the non-stream body, or both; most are
defects seen in a real server or proxy on this door (llama.cpp's llama-server, LiteLLM's adapter, LM Studio).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse, Response

from lmconform.reference.faults.registry import Stage, fault, flag

SDK_RAISES = "client.anthropic_python.stream_helper"
SDK_DIFFERS = "client.anthropic_python.matches_stream"

Event = dict[str, Any]
Frame = tuple[Any, Event]  # the name an event's SSE `event:` line gives it (None: no such line), and its data

TOOL_RESULT_500 = flag(
    "messages-tool-result-500", api="messages",
    summary="a user turn holding `tool_result` blocks is answered HTTP 500 `api_error`",
    seen_in="servers whose chat template cannot render tool results (mixed tool_result and text turns refused "
            "behind LM Studio's door, free-claude-code PR #979)",
    findings={"messages.tool_result.turn_answered", "http.status.success_for_valid_request"})


SYSTEM_TURN_REFUSED = flag(
    "messages-system-turn-refused", api="messages",
    summary="a system turn among the messages is refused: HTTP 400, `messages.N.role: Input should be 'user' or "
            "'assistant'`",
    seen_in="LM Studio before 0.4.15 and its standalone server llmster 0.0.20 (lmstudio-bug-tracker #2204), vLLM and "
            "proxies translating the Messages API (CLIProxyAPI #3625): Claude Code sends one in its first request",
    findings={"http.status.success_for_valid_request"},
    agent_findings={"agent.request.accepted"})


def _refusal_parts(refusal: Response) -> tuple[int, str]:
    body = json.loads(bytes(refusal.body))
    error = body.get("error") if isinstance(body, dict) else None
    return refusal.status_code, error.get("message", "") if isinstance(error, dict) else str(error)


@fault("messages-tool-results-dropped", Stage.MESSAGES_REQUEST, api="messages",
       summary="`tool_result` blocks never reach the model, which answers as if its call were still unanswered",
       seen_in="servers that do not give the chat template the tool results (oMLX PR #789: the model repeats the "
               "same call without end)",
       # It refuses no tool_result it never reads: one that answers no call of the turn before is taken.
       findings={"errors.status.client_error_for_invalid_request", "errors.body.has_error_message"},
       agent_findings={"agent.loop.bounded", "agent.answer.reached_user"})
def tool_results_dropped(body: Any) -> Any:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return body
    kept = [{**message, "content": [block for block in message["content"] if not (
                isinstance(block, dict) and block.get("type") == "tool_result")]}
            if isinstance(message, dict) and isinstance(message.get("content"), list) else message
            for message in messages]
    return {**body, "messages": kept}


@fault("messages-max-tokens-defaulted", Stage.MESSAGES_REQUEST, api="messages",
       summary="a request without `max_tokens` is answered as if it had asked for 4096",
       seen_in="llama.cpp's llama-server",
       findings={"messages.request.max_tokens_required"})
def max_tokens_defaulted(body: Any) -> Any:
    return {**body, "max_tokens": 4096} if isinstance(body, dict) and "max_tokens" not in body else body


@fault("messages-tool-choice-none-dropped", Stage.MESSAGES_REQUEST, api="messages",
       summary='`tool_choice` `{"type": "none"}` is dropped, so tools may be called (stream and non-stream)',
       seen_in="llama.cpp's llama-server (server_chat_convert_anthropic_to_oai)",
       findings={"messages.tool_choice.none_calls_no_tool"})
def tool_choice_none_dropped(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "none":
        return {key: value for key, value in body.items() if key != "tool_choice"}
    return body


@fault("messages-any-read-as-auto", Stage.MESSAGES_REQUEST, api="messages",
       summary='`tool_choice` `{"type": "any"}` is read as `auto`: a prompt that names no tool gets text',
       seen_in="not seen yet: the slip of an adapter that maps Anthropic's choices onto `auto` and `none` only",
       findings={"messages.tool_choice.any_calls_a_tool"})
def any_read_as_auto(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "any":
        return {**body, "tool_choice": {**choice, "type": "auto"}}
    return body


@fault("messages-named-tool-not-enforced", Stage.MESSAGES_REQUEST, api="messages",
       summary='`tool_choice` `{"type": "tool", "name"}` is read as `any`: some tool is called, not the named one',
       seen_in="llama.cpp's llama-server (both map to `required`)",
       findings={"messages.tool_choice.tool_calls_the_named_tool"})
def named_tool_not_enforced(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and choice.get("type") == "tool":
        kept = {key: value for key, value in choice.items() if key not in ("type", "name")}
        return {**body, "tool_choice": {"type": "any", **kept}}
    return body


@fault("messages-parallel-not-disabled", Stage.MESSAGES_REQUEST, api="messages",
       summary="`disable_parallel_tool_use: true` is ignored: two tools asked for are both called",
       seen_in="LiteLLM 1.106.2's adapter and llama.cpp's llama-server",
       findings={"messages.tool_choice.parallel_disabled_one_call"})
def parallel_not_disabled(body: Any) -> Any:
    choice = body.get("tool_choice") if isinstance(body, dict) else None
    if isinstance(choice, dict) and "disable_parallel_tool_use" in choice:
        kept = {key: value for key, value in choice.items() if key != "disable_parallel_tool_use"}
        return {**body, "tool_choice": kept}
    return body


@fault("messages-error-openai-shape", Stage.MESSAGES_REFUSAL, api="messages",
       summary='refusals carry OpenAI\'s `{"error": {"message", "type", "code"}}`, not Anthropic\'s '
               '`{"type": "error", "error": {…}}`',
       seen_in="llama.cpp's llama-server",
       findings={"messages.error.anthropic_shape", "schema.errors.body.should"})
def error_openai_shape(refusal: Response) -> Response:
    status, message = _refusal_parts(refusal)
    return JSONResponse({"error": {"code": status, "message": message, "type": "invalid_request_error"}}, status)


@fault("messages-bad-request-500", Stage.MESSAGES_REFUSAL, api="messages",
       summary="a request that deserves a 400 is answered HTTP 500 `api_error`",
       seen_in="llama.cpp's llama-server (a request without `messages`); LM Studio's engine errors "
               "(lmstudio-bug-tracker#2220)",
       findings={"errors.status.client_error_for_invalid_request", "messages.request.max_tokens_required", "errors.status.not_server_error"})
def bad_request_500(refusal: Response) -> Response:
    _, message = _refusal_parts(refusal)
    return JSONResponse({"type": "error", "error": {"type": "api_error", "message": message}}, 500)


@fault("messages-end-turn-after-tool-use", Stage.MESSAGES_OBJECT, api="messages",
       summary='`stop_reason` is "end_turn" after tool_use blocks (stream and non-stream)',
       seen_in="LiteLLM#34692 (Claude Code then drops the call)",
       findings={"messages.stop_reason.tool_use_iff_tool_block"},
       proxy_findings={"proxy.diff.generation_preserved"})
def end_turn_after_tool_use(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "stop_reason": "end_turn"} if message.get("stop_reason") == "tool_use" else message


@fault("messages-stop-reason-openai", Stage.MESSAGES_OBJECT, api="messages",
       summary='`stop_reason` speaks OpenAI\'s words: "stop", "tool_calls", "length" (stream and non-stream)',
       seen_in="hand-written Anthropic adapters over chat completions",
       findings={"messages.stop_reason.known_value", "messages.stop_reason.tool_use_iff_tool_block",
                 "messages.stop_reason.stop_sequence_reported", "schema.messages.message.must",
                 "schema.messages.event.must"})
def stop_reason_openai(message: dict[str, Any]) -> dict[str, Any]:
    words = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
    return {**message, "stop_reason": words.get(message.get("stop_reason"), message.get("stop_reason"))}


@fault("messages-stop-sequence-as-end-turn", Stage.MESSAGES_OBJECT, api="messages",
       summary='an answer a stop sequence ended says "end_turn", with the sequence in `stop_sequence` '
               "(stream and non-stream)",
       seen_in="llama.cpp's llama-server",
       findings={"messages.stop_reason.stop_sequence_reported"})
def stop_sequence_as_end_turn(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "stop_reason": "end_turn"} if message.get("stop_reason") == "stop_sequence" else message


@fault("messages-usage-missing", Stage.MESSAGES_OBJECT, api="messages",
       summary="no `usage`: neither in the message nor in `message_start` and `message_delta` (stream and "
               "non-stream)",
       seen_in="minimal Anthropic adapters",
       findings={"messages.usage.reported", SDK_RAISES, "schema.messages.message.must", "schema.messages.event.must"})
def usage_missing(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "usage"}


@fault("messages-stop-sequence-omitted", Stage.MESSAGES_OBJECT, api="messages",
       summary="a null `stop_sequence` is left out: of the message, of message_start and of message_delta (stream and "
               "non-stream)",
       seen_in="Anthropic adapters written in Go, whose `stop_sequence` is `omitempty`",
       findings={"schema.messages.message.info", "schema.messages.event.info"})
def stop_sequence_omitted(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("stop_sequence") is not None:
        return message
    return {key: value for key, value in message.items() if key != "stop_sequence"}


@fault("messages-type-missing", Stage.MESSAGES_OBJECT, api="messages",
       summary='the message has no `"type": "message"` (stream and non-stream)',
       seen_in="adapters that copy an OpenAI body's fields",
       findings={"messages.message.type_and_role", "schema.messages.message.should", "schema.messages.event.should"})
def type_missing(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "type"}


@fault("messages-tool-use-incomplete", Stage.MESSAGES_OBJECT, api="messages",
       summary="tool_use blocks have no `id` (stream and non-stream)",
       seen_in="servers that map tool calls to blocks by hand",
       findings={"messages.tool_use.block_complete", "schema.messages.message.must", "schema.messages.event.must"})
def tool_use_incomplete(message: dict[str, Any]) -> dict[str, Any]:
    content = [{key: value for key, value in block.items() if key != "id"} if block.get("type") == "tool_use"
               else block for block in message["content"]]
    return {**message, "content": content}


@fault("messages-thinking-signature-missing", Stage.MESSAGES_OBJECT, api="messages",
       summary="thinking blocks carry no `signature`, and their stream no `signature_delta`",
       seen_in="llama.cpp's llama-server before PR #18551",
       findings={"messages.thinking.signature_present"})
def thinking_signature_missing(message: dict[str, Any]) -> dict[str, Any]:
    content = [{key: value for key, value in block.items() if key != "signature"} if block.get("type") == "thinking"
               else block for block in message["content"]]
    return {**message, "content": content}


@fault("messages-content-as-string", Stage.MESSAGES_BODY, api="messages",
       summary="a text-only message's `content` is its text as one string, not a list of blocks (non-stream only)",
       seen_in="adapters that copy an OpenAI message's content",
       findings={"messages.message.content_blocks", "generation.answer.not_empty", "schema.messages.message.must"})
def content_as_string(message: dict[str, Any]) -> dict[str, Any]:
    blocks = message.get("content") or []
    if blocks and all(block.get("type") == "text" for block in blocks):
        return {**message, "content": "".join(block["text"] for block in blocks)}
    return message


@fault("messages-no-message-start", Stage.MESSAGES_EVENTS, api="messages",
       summary="the stream has no `message_start` (stream only)",
       seen_in="hand-written Anthropic encoders",
       findings={"messages.stream.lifecycle", SDK_RAISES})
def no_message_start(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "message_start"]


@fault("messages-no-message-stop", Stage.MESSAGES_EVENTS, api="messages",
       summary="the stream ends without `message_stop` (stream only)",
       seen_in="servers that end the stream at message_delta",
       findings={"messages.stream.lifecycle"})
def no_message_stop(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "message_stop"]


@fault("messages-start-with-content", Stage.MESSAGES_EVENTS, api="messages",
       summary="`message_start` already lists the first block, which `content_block_start` then opens again "
               "(stream only)",
       seen_in="encoders that send the message snapshot they have so far",
       findings={"messages.stream.message_start_empty", SDK_DIFFERS, "schema.messages.event.must"})
def start_with_content(events: list[Event]) -> list[Event]:
    first = next((event["content_block"] for event in events if event["type"] == "content_block_start"), None)
    return [{**event, "message": {**event["message"], "content": [first]}}
            if event["type"] == "message_start" and first is not None else event for event in events]


@fault("messages-block-index-from-one", Stage.MESSAGES_EVENTS, api="messages",
       summary="content blocks are numbered from 1 (stream only)",
       seen_in="LiteLLM's Responses adapter (an index of -1 before any start); servers that count from 1",
       findings={"messages.stream.block_indexes", SDK_RAISES})
def block_index_from_one(events: list[Event]) -> list[Event]:
    return [{**event, "index": event["index"] + 1} if "index" in event else event for event in events]


@fault("messages-block-not-stopped", Stage.MESSAGES_EVENTS, api="messages",
       summary="the last content block gets no `content_block_stop` (stream only)",
       seen_in="encoders that close only the blocks they finish early",
       findings={"messages.stream.blocks_closed"})
def block_not_stopped(events: list[Event]) -> list[Event]:
    last = max((position for position, event in enumerate(events) if event["type"] == "content_block_stop"),
               default=None)
    return [event for position, event in enumerate(events) if position != last]


@fault("messages-blocks-overlap", Stage.MESSAGES_EVENTS, api="messages",
       summary="every `content_block_stop` is sent at the end, after all the blocks' deltas (stream only)",
       seen_in="llama.cpp's llama-server (its final result carries every stop)",
       findings={"messages.stream.one_block_at_a_time", "generation.order.follows_grammar"})
def blocks_overlap(events: list[Event]) -> list[Event]:
    stops = [event for event in events if event["type"] == "content_block_stop"]
    kept = [event for event in events if event["type"] != "content_block_stop"]
    closing = next(position for position, event in enumerate(kept) if event["type"] == "message_delta")
    return [*kept[:closing], *stops, *kept[closing:]]


@fault("messages-delta-type-mismatch", Stage.MESSAGES_EVENTS, api="messages",
       summary="a text block's deltas come as `thinking_delta` (stream only)",
       seen_in="LiteLLM#32357 (the anthropic SDK drops them: empty content)",
       findings={"messages.stream.delta_fits_block", SDK_DIFFERS})
def delta_type_mismatch(events: list[Event]) -> list[Event]:
    def changed(event: Event) -> Event:
        delta = event.get("delta") or {}
        if event["type"] == "content_block_delta" and delta.get("type") == "text_delta":
            return {**event, "delta": {"type": "thinking_delta", "thinking": delta["text"]}}
        return event

    return [changed(event) for event in events]


@fault("messages-partial-json-cumulative", Stage.MESSAGES_EVENTS, api="messages",
       summary="each `input_json_delta` re-sends all of the tool input so far (stream only)",
       seen_in="LiteLLM passing cumulative upstream fragments through",
       findings={"generation.tool_call.arguments_not_cumulative", "generation.tool_call.arguments_json_object",
                 "messages.tool_result.turn_answered", SDK_RAISES},
       agent_findings={"agent.tool.ran_with_arguments_sent", "agent.answer.reached_user"})
def partial_json_cumulative(events: list[Event]) -> list[Event]:
    so_far: dict[int, str] = {}

    def changed(event: Event) -> Event:
        delta = event.get("delta") or {}
        if event["type"] == "content_block_delta" and delta.get("type") == "input_json_delta":
            so_far[event["index"]] = so_far.get(event["index"], "") + delta["partial_json"]
            return {**event, "delta": {**delta, "partial_json": so_far[event["index"]]}}
        return event

    return [changed(event) for event in events]


@fault("messages-tool-start-without-input", Stage.MESSAGES_EVENTS, api="messages",
       summary="a tool_use block's `content_block_start` has no `input` key (stream only)",
       seen_in="llama.cpp's llama-server",
       findings={"messages.stream.tool_use_opens_with_input", "schema.messages.event.should"})
def tool_start_without_input(events: list[Event]) -> list[Event]:
    def changed(event: Event) -> Event:
        block = event.get("content_block") or {}
        if event["type"] == "content_block_start" and block.get("type") == "tool_use":
            return {**event, "content_block": {key: value for key, value in block.items() if key != "input"}}
        return event

    return [changed(event) for event in events]


@fault("messages-error-event-mid-stream", Stage.MESSAGES_EVENTS, api="messages",
       summary="an `overloaded_error` event after the last delta, and the stream goes on to message_stop "
               "(stream only)",
       seen_in="proxies that report an upstream hiccup and carry on",
       findings={"messages.stream.error_ends_stream", SDK_RAISES},
       agent_findings={"agent.tool.ran_with_arguments_sent", "agent.answer.reached_user", "agent.error.none_shown"})
def error_event_mid_stream(events: list[Event]) -> list[Event]:
    last = max(position for position, event in enumerate(events) if event["type"] == "content_block_delta")
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return [*events[:last + 1], error, *events[last + 1:]]


@fault("messages-event-name-missing", Stage.MESSAGES_FRAMES, api="messages",
       summary="events have a `data:` line but no `event:` line (stream only)",
       seen_in="OpenAI-style SSE encoders reused for Anthropic streams",
       findings={"messages.stream.event_field_matches_type", SDK_RAISES})
def event_name_missing(frames: list[Frame]) -> list[Frame]:
    return [(None, data) for _, data in frames]
