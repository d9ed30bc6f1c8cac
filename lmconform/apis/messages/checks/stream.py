"""The grammar of a Messages event stream (Anthropic's streaming guide): named events, `message_start` first with
no content yet, content blocks numbered 0, 1, 2… each opened, filled with deltas of its kind and stopped, one
`message_delta`, `message_stop` last; `ping` anywhere; an `error` event ends the stream."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.messages.checks.scope import messages_streamed, messages_with_tools
from lmconform.apis.messages.checks.views import require_messages_stream
from lmconform.apis.messages.normalize import DELTAS_OF_BLOCK
from lmconform.checks.observed import Observed
from lmconform.checks.refs import ANTHROPIC_PYTHON_SSE, ANTHROPIC_PYTHON_STREAM_HELPER, ANTHROPIC_STREAMING
from lmconform.checks.registry import check
from lmconform.normalize.data_events import TypedEvent
from lmconform.vocabulary import Failure, Level, NotApplicable

BLOCK_EVENTS = ("content_block_start", "content_block_delta", "content_block_stop")


def _events(observed: Observed) -> list[TypedEvent]:
    """The stream's events without pings, which may come anywhere."""
    return [event for event in require_messages_stream(observed).events if event.type != "ping"]


@check("messages.stream.event_field_matches_type", level=Level.MUST, applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_SSE, title="every event has an SSE `event:` line equal to its data's `type`",
       proven_by=("messages-event-name-missing",))
def event_field_matches_type(observed: Observed) -> Iterator[Failure]:
    # MUST: the anthropic SDKs skip an event without an `event:` line: a data-only stream reads as nothing at all.
    for event in require_messages_stream(observed).events:
        if not event.has_event_field:
            yield Failure(f"event: {event.type}", "no event: line", str(event.source))
            return
        if event.event.event != event.type:
            yield Failure(f"event: {event.type}", f"event: {event.event.event}", str(event.source))
            return


@check("messages.stream.lifecycle", level=Level.MUST, applies=messages_streamed, ref=ANTHROPIC_STREAMING,
       title="`message_start` first, one `message_delta` after the last block, `message_stop` last, each once",
       proven_by=("messages-no-message-stop",))
def lifecycle(observed: Observed) -> Iterator[Failure]:
    events = _events(observed)
    if events and events[-1].type == "error":
        raise NotApplicable("the stream ended with an error event, as a stream that fails may")
    kinds = [event.type for event in events if event.type != "error"]
    last = str(events[-1].source) if events else observed.exchange.body_excerpt(200)
    if not kinds or kinds[0] != "message_start":
        yield Failure("message_start first", f"{kinds[0] if kinds else 'no event'} first",
                      str(events[0].source) if events else last)
    for kind in ("message_start", "message_delta", "message_stop"):
        if kinds.count(kind) != 1:
            yield Failure(f"one {kind}", f"{kinds.count(kind)}", last)
    if not kinds or kinds[-1] != "message_stop":
        yield Failure("message_stop last", f"{kinds[-1] if kinds else 'no event'} last", last)
    if "message_delta" in kinds:
        after = [kind for kind in kinds[kinds.index("message_delta"):] if kind in BLOCK_EVENTS]
        if after:
            yield Failure("every block stopped before message_delta", f"{after[0]} after it", last)


@check("messages.stream.message_start_empty", level=Level.MUST, applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER, title="`message_start` carries the message with an empty `content`",
       proven_by=("messages-start-with-content",))
def message_start_empty(observed: Observed) -> Iterator[Failure]:
    # MUST: the SDK's accumulator starts from this message and appends each started block to its content: blocks
    # already there shift every index the deltas address.
    for event in require_messages_stream(observed).of_type("message_start"):
        content = event.part("message").get("content")
        if content != []:
            yield Failure('"content": []', f"content {content!r}"[:200], str(event.source))


@check("messages.stream.block_indexes", level=Level.MUST, applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER, title="content blocks are numbered 0, 1, 2… in the order they start",
       proven_by=("messages-block-index-from-one",))
def block_indexes(observed: Observed) -> Iterator[Failure]:
    # MUST: the SDK appends each started block and looks deltas up by index as a list position: a first block at 1
    # is an IndexError, a reused index sends the deltas into an earlier block.
    for position, block in enumerate(require_messages_stream(observed).blocks):
        if block.index != position or isinstance(block.index, bool):
            yield Failure(f"index {position}", f"index {block.index!r}", str(block.start.source))
            return


@check("messages.stream.blocks_closed", level=Level.MUST, applies=messages_streamed, ref=ANTHROPIC_STREAMING,
       title="each delta and stop names an open block, and every block is stopped once",
       proven_by=("messages-block-not-stopped",))
def blocks_closed(observed: Observed) -> Iterator[Failure]:
    open_blocks: set = set()
    stopped: set = set()
    for event in _events(observed):
        index = event.get("index")
        if event.type == "content_block_start":
            open_blocks.add(index)
        elif event.type in ("content_block_delta", "content_block_stop") and index not in open_blocks:
            where = "after its stop" if index in stopped else "before any start"
            yield Failure(f"a {event.type} for an open block", f"index {index!r} {where}", str(event.source))
            return
        if event.type == "content_block_stop":
            open_blocks.discard(index)
            stopped.add(index)
    if open_blocks:
        yield Failure("every block stopped", f"blocks {sorted(map(repr, open_blocks))} never stopped",
                      observed.exchange.body_excerpt(200))


@check("messages.stream.one_block_at_a_time", level=Level.SHOULD, applies=messages_streamed, ref=ANTHROPIC_STREAMING,
       title="a block is stopped before the next one starts", proven_by=("messages-blocks-overlap",))
def one_block_at_a_time(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the SDKs address deltas by index and cope, but Anthropic's API never overlaps blocks, and clients
    # that render one block at a time show the later block's text inside the earlier one.
    open_index = None
    for event in _events(observed):
        if event.type == "content_block_start":
            if open_index is not None:
                yield Failure(f"block {open_index} stopped first", f"block {event.get('index')!r} started",
                              str(event.source))
                return
            open_index = event.get("index")
        elif event.type == "content_block_stop" and event.get("index") == open_index:
            open_index = None


@check("messages.stream.delta_fits_block", level=Level.MUST, applies=messages_streamed,
       ref=ANTHROPIC_PYTHON_STREAM_HELPER, title="each delta is of its block's kind (text_delta in a text block…)",
       proven_by=("messages-delta-type-mismatch",))
def delta_fits_block(observed: Observed) -> Iterator[Failure]:
    # MUST: the SDK silently drops a delta its block cannot take (thinking_delta into a text block): the text is
    # lost to every client built on it.
    for block in require_messages_stream(observed).blocks:
        allowed = DELTAS_OF_BLOCK.get(block.type)
        for event in block.deltas:
            kind = event.part("delta").get("type")
            if allowed is not None and kind not in allowed:
                yield Failure(f"{' or '.join(allowed)} in a {block.type} block", f"{kind!r}", str(event.source))
                return


@check("messages.stream.tool_use_opens_with_input", level=Level.SHOULD, applies=messages_with_tools,
       ref=ANTHROPIC_STREAMING, title='a streamed tool_use block opens with `"input": {}`',
       proven_by=("messages-tool-start-without-input",))
def tool_use_opens_with_input(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the SDK's block keeps the `input` it opened with until a fragment replaces it; a block that opens
    # without one and streams no fragment has no `input` at all, and `block.input` raises in its caller.
    if not observed.exchange.is_event_stream:
        raise NotApplicable("not streamed")
    for block in require_messages_stream(observed).blocks:
        if block.type == "tool_use" and "input" not in block.start.part("content_block"):
            yield Failure('"input": {} in content_block_start', "no input key", str(block.start.source))


@check("messages.stream.error_ends_stream", level=Level.MUST, applies=messages_streamed, ref=ANTHROPIC_STREAMING,
       title="an `error` event is the last event of its stream", proven_by=("messages-error-event-mid-stream",))
def error_ends_stream(observed: Observed) -> Iterator[Failure]:
    # MUST: the SDKs raise on the error event and read no further; whatever follows is lost, and a stream that
    # goes on after an error says two things at once.
    events = _events(observed)
    errors = [position for position, event in enumerate(events) if event.type == "error"]
    if not errors:
        raise NotApplicable("no error event")
    if errors[0] != len(events) - 1:
        yield Failure("nothing after the error event", f"{len(events) - 1 - errors[0]} more events",
                      str(events[errors[0] + 1].source))
