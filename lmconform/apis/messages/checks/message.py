"""The message a Messages client ends up with (the body, or the stream accumulated): its type and content
blocks, its tool_use blocks, its stop reason and its usage."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.messages.checks.scope import (
    messages_answer,
    messages_asking_thinking,
    messages_not_streamed,
    messages_with_stop_sequences,
    messages_with_tools,
)
from lmconform.apis.messages.checks.views import final_message, require_messages_stream
from lmconform.apis.messages.normalize import STOP_REASONS
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    ANTHROPIC_MESSAGES,
    ANTHROPIC_PYTHON_STREAM_HELPER,
    ANTHROPIC_THINKING,
    ANTHROPIC_TOOL_USE,
    CLAUDE_CODE_TOOL_USE,
)
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable


def _stop_reason(observed: Observed) -> tuple[object, str]:
    """The stop reason (from the body, or the stream's message_delta) and where it was said."""
    observed.require_success()
    if observed.exchange.is_event_stream:
        deltas = require_messages_stream(observed).of_type("message_delta")
        if not deltas:
            raise NotApplicable("no message_delta; messages.stream.lifecycle reports it")
        return deltas[-1].part("delta").get("stop_reason"), str(deltas[-1].source)
    body = final_message(observed)
    return body.get("stop_reason"), observed.exchange.body_excerpt(300)


def _content(observed: Observed) -> list[dict]:
    observed.require_success()
    content = final_message(observed).get("content")
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


@check("messages.message.type_and_role", level=Level.SHOULD, applies=messages_answer, ref=ANTHROPIC_MESSAGES,
       title='the message says `"type": "message"` and `"role": "assistant"`, with a string `id`',
       proven_by=("messages-type-missing",))
def type_and_role(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the SDKs do not validate the message, but a client that tells a message from an error body by its
    # type, or keeps the id, reads these.
    observed.require_success()
    if observed.exchange.is_event_stream:
        starts = require_messages_stream(observed).of_type("message_start")
        if not starts:
            raise NotApplicable("no message_start; messages.stream.lifecycle reports it")
        message, where = starts[0].part("message"), str(starts[0].source)
    else:
        message, where = final_message(observed), observed.exchange.body_excerpt(300)
    found = {"type": message.get("type"), "role": message.get("role"), "id": type(message.get("id")).__name__}
    if found != {"type": "message", "role": "assistant", "id": "str"}:
        yield Failure('type "message", role "assistant", a string id', str(found), where)


@check("messages.message.content_blocks", level=Level.MUST, applies=messages_not_streamed, ref=ANTHROPIC_MESSAGES,
       title="`content` is a list of typed blocks; a text block's `text` is a string",
       proven_by=("messages-content-as-string",))
def content_blocks(observed: Observed) -> Iterator[Failure]:
    # MUST: clients iterate the blocks (`for block in message.content`): a string content gives them characters.
    observed.require_success()
    content = final_message(observed).get("content")
    if not isinstance(content, list):
        yield Failure("a list of content blocks", f"{type(content).__name__} {content!r}"[:200],
                      observed.exchange.body_excerpt(300))
        return
    for position, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            yield Failure("a block with a string type", f"content[{position}] = {block!r}"[:200])
        elif block["type"] == "text" and not isinstance(block.get("text"), str):
            yield Failure("a string text", f"content[{position}].text = {block.get('text')!r}"[:200])


@check("messages.tool_use.block_complete", level=Level.MUST, applies=messages_with_tools, ref=ANTHROPIC_TOOL_USE,
       title="a tool_use block has a non-empty `id` and `name`, and its `input` is an object",
       proven_by=("messages-tool-use-incomplete",))
def tool_use_block_complete(observed: Observed) -> Iterator[Failure]:
    # MUST: a client answers the call with a tool_result naming this id, and runs the tool by its name with input.
    for position, block in enumerate(_content(observed)):
        if block.get("type") != "tool_use":
            continue
        for key in ("id", "name"):
            if not isinstance(block.get(key), str) or not block[key]:
                yield Failure(f"a non-empty {key}", f"{key} {block.get(key)!r}", f"content[{position}]: {block}"[:300])
        # A stream's input is its fragments, which the generation.tool_call checks judge.
        if "input" in block and not isinstance(block["input"], dict) and not observed.exchange.is_event_stream:
            yield Failure("an input object", f"{type(block['input']).__name__} {block['input']!r}"[:200],
                          f"content[{position}]"[:300])


@check("messages.stop_reason.known_value", level=Level.MUST, applies=messages_answer, ref=ANTHROPIC_MESSAGES,
       title="`stop_reason` is one of Anthropic's values (end_turn, max_tokens, stop_sequence, tool_use, …)",
       proven_by=("messages-stop-reason-openai",))
def stop_reason_known(observed: Observed) -> Iterator[Failure]:
    # MUST: clients branch on these words (Claude Code runs tools on "tool_use"); OpenAI's "stop" or "tool_calls"
    # match none of their branches.
    reason, where = _stop_reason(observed)
    if reason not in STOP_REASONS:
        yield Failure(" or ".join(STOP_REASONS), repr(reason), where)


@check("messages.stop_reason.tool_use_iff_tool_block", level=Level.MUST, applies=messages_with_tools,
       ref=CLAUDE_CODE_TOOL_USE, title='`stop_reason` is "tool_use" exactly when a tool_use block was sent',
       proven_by=("messages-end-turn-after-tool-use",))
def tool_use_iff_tool_block(observed: Observed) -> Iterator[Failure]:
    # MUST: agent loops (Claude Code) run the tools only when the stop reason says tool_use, and wait for tool
    # results when it does.
    reason, where = _stop_reason(observed)
    called = [block.get("name") for block in _content(observed) if block.get("type") == "tool_use"]
    if called and reason != "tool_use":
        yield Failure(f'"tool_use" after tool_use blocks {called}', repr(reason), where)
    elif not called and reason == "tool_use":
        yield Failure("another stop reason: no tool_use block was sent", repr(reason), where)


@check("messages.stop_reason.max_tokens_at_cap", level=Level.SHOULD, applies=messages_answer, ref=ANTHROPIC_MESSAGES,
       title='an answer that used up `max_tokens` says `stop_reason: "max_tokens"`',
       proven_by=("messages-end-turn-at-max-tokens",))
def max_tokens_at_cap(observed: Observed) -> Iterator[Failure]:
    # SHOULD, as chat's finish_reason "length": Claude Code asks again with a larger cap on "max_tokens" and takes
    # "end_turn" for a finished answer; measured with the server's own count, so a short answer is never judged.
    reason, where = _stop_reason(observed)
    cap = observed.request_body.get("max_tokens") if isinstance(observed.request_body, dict) else None
    usage = final_message(observed).get("usage")
    used = usage.get("output_tokens") if isinstance(usage, dict) else None
    if not isinstance(cap, int) or not isinstance(used, int) or used < cap or reason == "tool_use":
        raise NotApplicable("the answer did not reach the request's max_tokens")
    if reason != "max_tokens":
        yield Failure(f'stop_reason "max_tokens" ({used} of {cap} tokens used)', f"stop_reason {reason!r}", where)


@check("messages.stop_reason.stop_sequence_reported", level=Level.SHOULD, applies=messages_with_stop_sequences,
       ref=ANTHROPIC_MESSAGES, title='an answer a stop sequence ended says "stop_sequence" and which one',
       proven_by=("messages-stop-sequence-as-end-turn",))
def stop_sequence_reported(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients that use stop sequences as delimiters learn which one ended the answer from these two fields.
    reason, where = _stop_reason(observed)
    sequence = final_message(observed).get("stop_sequence")
    asked = observed.case.body.get("stop_sequences") or []
    if reason != "stop_sequence" and sequence is None:
        raise NotApplicable(f"no stop sequence ended the answer (stop_reason {reason!r})")
    if reason != "stop_sequence":
        yield Failure(f'"stop_sequence" with stop_sequence {sequence!r}', f"stop_reason {reason!r}", where)
    elif sequence not in asked:
        yield Failure(f"stop_sequence one of {asked}", f"stop_sequence {sequence!r}", where)


@check("messages.usage.reported", level=Level.MUST, applies=messages_answer, ref=ANTHROPIC_PYTHON_STREAM_HELPER,
       title="usage counts `input_tokens` and `output_tokens`; a stream's `message_delta` carries `output_tokens`",
       proven_by=("messages-usage-missing",))
def usage_reported(observed: Observed) -> Iterator[Failure]:
    # MUST: the SDK's accumulator reads message_delta.usage.output_tokens, and raises AttributeError without it.
    observed.require_success()
    if not observed.exchange.is_event_stream:
        usage = final_message(observed).get("usage")
        usage = usage if isinstance(usage, dict) else {}
        for key in ("input_tokens", "output_tokens"):
            if isinstance(usage.get(key), bool) or not isinstance(usage.get(key), int):
                yield Failure(f"an integer usage.{key}", repr(usage.get(key)), observed.exchange.body_excerpt(300))
        return
    stream = require_messages_stream(observed)
    for event in stream.of_type("message_start"):
        if not isinstance(event.part("message").get("usage"), dict):
            yield Failure("message.usage, an object", repr(event.part("message").get("usage")), str(event.source))
    for event in stream.of_type("message_delta"):
        tokens = event.part("usage").get("output_tokens")
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            yield Failure("an integer usage.output_tokens", repr(tokens), str(event.source))


@check("messages.thinking.signature_present", level=Level.SHOULD, applies=messages_asking_thinking,
       ref=ANTHROPIC_THINKING, title="a thinking block carries a `signature`",
       proven_by=("messages-thinking-signature-missing",))
def signature_present(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients send thinking blocks back with the next turn, and Anthropic's API (and the SDK's types)
    # require their signature there; a local server may leave it empty.
    thinking = [block for block in _content(observed) if block.get("type") == "thinking"]
    if not thinking:
        raise NotApplicable("no thinking block")
    for block in thinking:
        if not isinstance(block.get("signature"), str):
            yield Failure("a signature string", f"signature {block.get('signature', '<missing>')!r}",
                          observed.exchange.body_excerpt(300))
