"""HTTP and SSE framing: properties of the bytes, whatever API they carry."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    GPTEL_OPENAI,
    LMCONFORM_LIMITS,
    OPENAI_CHAT_CREATE,
    OPENAI_CHAT_STREAMING,
    OPENAI_PYTHON_SSE_ID,
    RFC9112_BODY_LENGTH,
    VOID_PARSER,
    WHATWG_SSE,
)
from lmconform.checks.registry import check
from lmconform.checks.scope import over_http, streamed, streamed_ending_with_done, valid_request
from lmconform.normalize.data_events import DataEvent, read_data_events
from lmconform.normalize.errors import refusal_words
from lmconform.vocabulary import Failure, Level, shown
from lmconform.wire.exchange import BROKEN, NOT_JSON


@check("http.status.success_for_valid_request", level=Level.MUST, applies=valid_request, ref=OPENAI_CHAT_CREATE,
       title="a valid request is answered 2xx without an error body", proven_by=("tool-choice-null-rejected",))
def success_for_valid_request(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    if not observed.succeeded:
        page = " with an HTML page (text/html): an error page of something between the client and the model " \
               "server, such as a reverse proxy" if exchange.content_type == "text/html" else ""
        yield Failure("a 2xx status", f"HTTP {exchange.status}{page}" if page else refusal_words(exchange),
                      exchange.body_excerpt())
    elif isinstance(exchange.json, dict) and exchange.json.get("error"):
        # LM Studio answers unknown routes with 200 and {"error": ...}: a success status is not an answer.
        # A Responses object always carries "error": null, which is no error.
        yield Failure("an answer", f"HTTP {exchange.status} with an error body", exchange.body_excerpt())


@check("http.body.within_size_cap", level=Level.MUST, applies=over_http, ref=LMCONFORM_LIMITS, judges_cut_bodies=True,
       title="the answer ends before the body size cap", proven_by=("body-too-large",))
def within_size_cap(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    if exchange.truncated:
        yield Failure(f"a body of at most {exchange.max_body_bytes} bytes",
                      f"more than {exchange.max_body_bytes} bytes; reading stopped there", exchange.body_excerpt(300))


@check("http.body.complete", level=Level.MUST, applies=over_http, ref=RFC9112_BODY_LENGTH,
       judges_broken_answers=True, proven_by=("connection-reset", "content-length-long"),
       title="the answer arrives whole: the server neither resets nor closes the connection before the body's end")
def body_complete(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    if exchange.error_kind == BROKEN:
        last = exchange.body[-300:].decode("utf-8", errors="replace")
        yield Failure("the whole body, then its end", exchange.error or "", f"the last bytes that arrived: {last!r}")


@check("sse.content_type.event_stream", level=Level.MUST, applies=streamed, ref=VOID_PARSER,
       title="`stream: true` is answered as text/event-stream, never a JSON body", proven_by=("json-instead-of-sse",))
def content_type_event_stream(observed: Observed) -> Iterator[Failure]:
    observed.require_success()
    exchange = observed.exchange
    if not exchange.is_event_stream:
        yield Failure("Content-Type: text/event-stream", f"Content-Type: {shown(exchange.headers.get('content-type'))}",
                      exchange.body_excerpt())


@check("sse.framing.well_formed", level=Level.MUST, applies=streamed, ref=WHATWG_SSE,
       title="the event stream is valid UTF-8 and every event is terminated", proven_by=("invalid-utf8",))
def framing_well_formed(observed: Observed) -> Iterator[Failure]:
    observed.require_event_stream()
    for issue in observed.exchange.sse.issues:
        excerpt = issue.excerpt.decode("utf-8", errors="backslashreplace")
        yield Failure("well-formed event-stream framing", f"{issue.kind} at byte {issue.offset}: {issue.detail}",
                      excerpt)


@check("sse.framing.data_is_json", level=Level.MUST, applies=streamed, ref=OPENAI_CHAT_STREAMING,
       title="every data payload but [DONE] is a JSON document", proven_by=("chunk-not-json",))
def data_is_json(observed: Observed) -> Iterator[Failure]:
    for chunk in _data_events(observed):
        if not chunk.done and chunk.payload is NOT_JSON:
            yield Failure("a JSON payload", f"{chunk.event.data[:120]!r}", str(chunk.source))


def _data_events(observed: Observed) -> list[DataEvent]:
    observed.require_event_stream()
    return observed.exchange.view(read_data_events)


@check("sse.framing.ends_with_done", level=Level.MUST, applies=streamed_ending_with_done, ref=GPTEL_OPENAI,
       title="the stream ends with `data: [DONE]`", proven_by=("no-done",))
def ends_with_done(observed: Observed) -> Iterator[Failure]:
    # MUST: gptel hands tool calls over only at [DONE] (they are lost without it), and clients that wait for the
    # sentinel hang; the openai SDKs end cleanly without it. Only for the APIs whose streams end so (chat
    # completions): the Responses API ends with response.completed and sends no [DONE].
    chunks = _data_events(observed)
    if not any(chunk.done for chunk in chunks):
        last = str(chunks[-1].source) if chunks else "(no events)"
        yield Failure("a final `data: [DONE]` event", "the stream ended without it", last)


@check("sse.framing.nothing_after_done", level=Level.MUST, applies=streamed, ref=OPENAI_CHAT_STREAMING,
       title="no event follows `data: [DONE]`", proven_by=("data-after-done",))
def nothing_after_done(observed: Observed) -> Iterator[Failure]:
    chunks = _data_events(observed)
    done_at = next((position for position, chunk in enumerate(chunks) if chunk.done), None)
    if done_at is not None:
        for chunk in chunks[done_at + 1:]:
            yield Failure("nothing after [DONE]", "another event", str(chunk.source))


_LINE_END = re.compile(rb"\r\n|\r|\n")
_DATA, _EVENT, _ID = re.compile(rb"data(:|$)"), re.compile(rb"event(:|$)"), re.compile(rb"id(:|$)")
# "id" ended as a field name is: a candidate for an id line, found by a literal search (fast on a long body).
_ID_FIELD_END = re.compile(rb"id(?::|[\r\n]|$)")


def _sets_an_id(body: bytes) -> bool:
    """Whether any line of the body is an id field (the first line may follow a byte order mark)."""
    return any(match.start() in (0, 3) and body[:match.start()] in (b"", b"\xef\xbb\xbf")
               or body[match.start() - 1:match.start()] in (b"\r", b"\n") for match in _ID_FIELD_END.finditer(body))


@check("sse.framing.no_empty_event_after_id", level=Level.MUST, applies=streamed, ref=OPENAI_PYTHON_SSE_ID,
       title="once an event has set `id:`, no block without data or event name is closed by a blank line",
       proven_by=("keepalive-after-event-id",))
def no_empty_event_after_id(observed: Observed) -> Iterator[Failure]:
    # MUST: the standard dispatches nothing for a block without data, but the openai Python SDK (to 3.54 at
    # least) keeps the last event id and dispatches such a block as an event with empty data, then fails to parse
    # it as JSON. Keep-alive comments are fine in a stream without ids, or inside an event.
    observed.require_event_stream()
    if not _sets_an_id(observed.exchange.body):  # most streams set no id: nothing to walk line by line
        return
    seen_id, block = False, []
    for line in _LINE_END.split(observed.exchange.body):
        if line:
            block.append(line)
        elif block:
            if seen_id and not any(_DATA.match(part) or _EVENT.match(part) for part in block):
                yield Failure("a data line in every block once ids are set", "a comment-only block",
                              b"\n".join(block).decode("utf-8", "backslashreplace")[:200])
                return
            seen_id = seen_id or any(_ID.match(part) for part in block)
            block = []
