"""The event-stream parser: the WHATWG rules one by one, read boundaries, httpx-sse as a second opinion."""

from __future__ import annotations

import codecs
import copy
import dataclasses
import pickle
import re

import pytest
from httpx_sse._decoders import SSEDecoder, SSELineDecoder
from hypothesis import given
from hypothesis import strategies as st

from lmconform.wire.sse import SSEEvent, SSEParser, SSEStream, parse_sse

BOM = b"\xef\xbb\xbf"
EMOJI = "\N{GRINNING FACE}"  # four bytes in UTF-8


def parse(*reads: bytes) -> SSEStream:
    return parse_sse(reads)


def summary(stream: SSEStream) -> list[tuple[str, str, str | None, int | None]]:
    return [(e.event, e.data, e.id, e.retry) for e in stream.events]


def only_data(stream: SSEStream) -> list[str]:
    return [e.data for e in stream.events]


# --- line ends ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_each_line_end(end: str) -> None:
    body = f"event: e{end}data: a{end}data: b{end}{end}".encode()
    stream = parse(body)
    assert summary(stream) == [("e", "a\nb", None, None)]
    assert stream.events[0].raw == body
    assert stream.issues == []


def test_mixed_line_ends_in_one_stream() -> None:
    body = b"data: a\rdata: b\r\ndata: c\n\r\n"
    stream = parse(body)
    assert only_data(stream) == ["a\nb\nc"]
    assert stream.events[0].raw == body


def test_crlf_split_across_reads_is_one_line_end() -> None:
    stream = parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert only_data(stream) == ["a\nb"]
    assert stream.events[0].raw == b"data: a\r\ndata: b\r\n\r\n"


def test_cr_then_cr_across_reads_is_two_line_ends() -> None:
    stream = parse(b"data: a\r", b"\r")
    assert only_data(stream) == ["a"]
    assert stream.issues == []


def test_event_ended_by_cr_at_end_of_read_waits_for_next_byte() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\r") == []
    [event] = parser.feed(b"\n")
    assert event.raw == b"data: a\n\r\n"
    assert parser.close() == []


def test_close_releases_a_held_cr() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r\r") == []
    [event] = parser.close()
    assert event.raw == b"data: a\r\r"
    assert parser.stream.issues == []


def test_feed_returns_the_events_each_read_completes() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert [e.data for e in parser.feed(b"\ndata: b\n\ndata: c\n\n")] == ["a", "b", "c"]
    assert [e.index for e in parser.stream.events] == [0, 1, 2]


# --- BOM ---------------------------------------------------------------------------------------------------


def test_leading_bom_is_stripped_and_offsets_still_count_it() -> None:
    stream = parse(BOM + b"data: a\n\n")
    assert only_data(stream) == ["a"]
    assert stream.events[0].offset == 3
    assert stream.events[0].raw == b"data: a\n\n"


def test_bom_split_across_reads() -> None:
    assert only_data(parse(b"\xef", b"\xbb", b"\xbfdata: a\n\n")) == ["a"]


def test_only_the_first_bom_is_stripped() -> None:
    # The second BOM becomes part of the field name "\ufeffdata", an unknown field, so nothing is dispatched.
    stream = parse(BOM + BOM + b"data: a\n\n")
    assert stream.events == []
    assert stream.issues == []


@pytest.mark.parametrize("head", [b"\xef", b"\xef\xbb", BOM], ids=["1-byte", "2-byte", "whole"])
def test_body_that_is_only_a_bom_or_part_of_one(head: bytes) -> None:
    # A whole BOM is stripped and leaves an empty body; part of one is an unended line, the event unterminated.
    stream = parse(head)
    assert stream.events == []
    if head == BOM:
        assert stream.issues == []
    else:
        [issue] = stream.issues
        assert (issue.kind, issue.offset, issue.excerpt) == ("unterminated_event", 0, head)


def test_bom_after_the_start_is_not_stripped() -> None:
    assert only_data(parse(b"data: a\n\n" + BOM + b"data: b\n\n")) == ["a"]


# --- fields ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "data"),
    [
        (b"data:a", "a"),
        (b"data: a", "a"),
        (b"data:  a", " a"),
        (b"data", ""),
        (b"data:", ""),
        (b"data: ", ""),
    ],
)
def test_data_field_value(line: bytes, data: str) -> None:
    assert only_data(parse(line + b"\n\n")) == [data]


def test_multi_line_data_joined_with_lf() -> None:
    assert only_data(parse(b"data: a\ndata:\ndata: b\n\n")) == ["a\n\nb"]


def test_event_type_defaults_to_message_and_resets_after_each_dispatch() -> None:
    stream = parse(b"event: x\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n")
    assert [e.event for e in stream.events] == ["x", "message", "message"]


def test_event_type_reset_by_a_blank_line_with_no_data() -> None:
    assert [e.event for e in parse(b"event: x\n\ndata: 1\n\n").events] == ["message"]


def test_id_persists_across_events_and_can_be_reset() -> None:
    stream = parse(b"data: 0\n\nid: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")
    assert [e.id for e in stream.events] == [None, "1", "1", ""]


def test_id_containing_nul_is_ignored() -> None:
    stream = parse(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.id for e in stream.events] == ["1", "1"]


def test_id_from_a_block_without_data_still_applies() -> None:
    assert [e.id for e in parse(b"id: 7\n\ndata: a\n\n").events] == ["7"]


def test_retry_is_the_events_own_and_needs_ascii_digits() -> None:
    stream = parse(b"retry: 3000\ndata: a\n\ndata: b\n\nretry: 007\ndata: c\n\n")
    assert [e.retry for e in stream.events] == [3000, None, 7]


@pytest.mark.parametrize("value", ["3s", "-1", "+1", "", " 5", "1_000", "1.5", "\u0661", "\uff11"], ids=repr)
def test_invalid_retry_is_ignored(value: str) -> None:
    assert [e.retry for e in parse(f"retry: {value}\ndata: a\n\n".encode()).events] == [None]


def test_unknown_fields_ignored_and_names_case_sensitive() -> None:
    stream = parse(b"foo: bar\nData: x\nEVENT: y\ndata: a\n\n")
    assert summary(stream) == [("message", "a", None, None)]
    assert stream.issues == []


def test_colon_only_in_value_is_kept() -> None:
    assert only_data(parse(b'data: {"a": "b:c"}\n\n')) == ['{"a": "b:c"}']


# --- comments and blank lines ------------------------------------------------------------------------------


def test_comments_ignored_and_counted() -> None:
    stream = parse(b": keep-alive\n\n:\n:x\ndata: a\n: inside\n\n")
    assert only_data(stream) == ["a"]
    assert stream.comments == 4
    # Comment lines with no blank line before the event belong to it.
    assert stream.events[0].raw == b":\n:x\ndata: a\n: inside\n\n"
    assert stream.events[0].offset == len(b": keep-alive\n\n")


def test_blank_lines_without_data_dispatch_nothing() -> None:
    stream = parse(b"\n\n\r\nevent: x\nid: 3\nretry: 5\n\ndata: a\n\n")
    assert summary(stream) == [("message", "a", "3", None)]
    assert stream.events[0].index == 0
    assert stream.issues == []


def test_offsets_and_raw_of_consecutive_events() -> None:
    body = b"data: a\n\n\ndata: bb\r\n\r\n"
    stream = parse(body)
    assert [(e.offset, e.raw) for e in stream.events] == [(0, b"data: a\n\n"), (10, b"data: bb\r\n\r\n")]
    assert stream.events[1].label() == "SSE event #1 (byte 10)"


# --- framing issues ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tail", [b"data: b\n", b"data: b", b"data: b\r"], ids=["LF", "no-line-end", "CR"])
def test_unterminated_final_event_reported_and_not_dispatched(tail: bytes) -> None:
    parser = SSEParser()
    assert [e.data for e in parser.feed(b"data: a\n\n" + tail)] == ["a"]
    assert parser.close() == []
    [issue] = parser.stream.issues
    assert issue.kind == "unterminated_event"
    assert issue.offset == 9
    assert issue.excerpt == tail


def test_unterminated_excerpt_is_capped() -> None:
    [issue] = parse(b"data: " + b"x" * 1000).issues
    assert (issue.kind, issue.offset, len(issue.excerpt)) == ("unterminated_event", 0, 200)


def test_close_twice_reports_once() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\n")
    parser.close()
    parser.close()
    assert len(parser.stream.issues) == 1


def test_invalid_utf8_reported_and_replaced() -> None:
    stream = parse(b"data: ok\n\ndata: a\xffb\n\n")
    assert only_data(stream) == ["ok", "a\ufffdb"]
    [issue] = stream.issues
    assert (issue.kind, issue.offset, issue.excerpt) == ("invalid_utf8", 10, b"data: a\xffb")
    assert "byte 17" in issue.detail


def test_invalid_utf8_in_a_comment_is_reported_too() -> None:
    stream = parse(b":\xc3\n\n")
    assert stream.comments == 1
    assert [i.kind for i in stream.issues] == ["invalid_utf8"]


def test_truncated_sequence_before_line_end_is_replaced() -> None:
    stream = parse(b"data: \xf0\x9f\ndata: ok\n\n")
    assert only_data(stream) == ["\ufffd\nok"]
    assert [(i.kind, i.offset) for i in stream.issues] == [("invalid_utf8", 0)]


def test_invalid_utf8_excerpt_is_capped() -> None:
    [issue] = parse(b"data: \xff" + b"x" * 1000 + b"\n\n").issues
    assert len(issue.excerpt) == 200


def test_emoji_split_at_every_point() -> None:
    body = f"data: {EMOJI}\n\n".encode()
    for i in range(len(body) + 1):
        for j in range(i, len(body) + 1):
            stream = parse(body[:i], body[i:j], body[j:])
            assert only_data(stream) == [EMOJI], (i, j)
            assert stream.issues == []


def test_one_long_line_in_many_reads() -> None:
    # One 32 MiB line fed in 4 KiB reads arrives whole. That its cost grows linearly with its length (a parser that
    # re-joins or re-scans the pending line on each read is quadratic) is `bench parser long line`.
    body = b"data: " + b"x" * (32 * 1024 * 1024) + b"\n\n"
    reads = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    stream = parse_sse(reads)
    assert len(stream.events[0].data) == 32 * 1024 * 1024


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_invalid_utf8_among_valid_events_with_each_line_end(end: str) -> None:
    # A read that is whole events but for one bad byte: every event still comes out, the bad line is pinned.
    first = f"data: ok{end}{end}".encode()
    body = first + f"event: e{end}data: a".encode() + b"\xff" + f"b{end}{end}data: \u00e9{end}{end}".encode()
    stream = parse(body)
    assert summary(stream) == [("message", "ok", None, None), ("e", "a\ufffdb", None, None), ("message", "\u00e9", None, None)]
    assert b"".join(e.raw for e in stream.events) == body
    second_line = len(first) + len(f"event: e{end}")
    [issue] = stream.issues
    assert (issue.kind, issue.offset, issue.excerpt) == ("invalid_utf8", second_line, b"data: a\xffb")
    assert f"byte {second_line + 7}" in issue.detail


def test_non_ascii_events_after_a_cut_keep_their_offsets() -> None:
    raws = [f"data: {EMOJI}\n\n".encode(), "event: \u00e9\ndata: x\n\n".encode(), b"data: y\n\n"]
    body = b"".join(raws)
    expected = [(0, raws[0]), (len(raws[0]), raws[1]), (len(raws[0]) + len(raws[1]), raws[2])]
    for cut in range(len(body) + 1):
        stream = parse(body[:cut], body[cut:])
        assert [(e.offset, e.raw) for e in stream.events] == expected, cut
        assert summary(stream) == [("message", EMOJI, None, None), ("\u00e9", "x", None, None), ("message", "y", None, None)]


def test_comments_and_issues_are_counted_by_the_read_that_ends_their_line() -> None:
    parser = SSEParser()
    parser.feed(b": ping")
    assert parser.stream.comments == 0
    parser.feed(b"\n\n: a\n")
    assert parser.stream.comments == 2
    parser.feed(b"data: \xff")
    assert parser.stream.issues == []
    parser.feed(b"\n")
    assert [(i.kind, i.offset) for i in parser.stream.issues] == [("invalid_utf8", len(b": ping\n\n: a\n"))]


def test_parsed_events_are_ordinary_events() -> None:
    # The parser fills events through their slots rather than __init__: they must be indistinguishable.
    [event] = parse(b"id: 1\nretry: 5\nevent: e\ndata: a\n\n").events
    [fast] = parse(b"data: b\n\n").events
    built = SSEEvent(index=0, event="e", data="a", id="1", retry=5, raw=b"id: 1\nretry: 5\nevent: e\ndata: a\n\n", offset=0)
    assert event == built and hash(event) == hash(built) and repr(event) == repr(built)
    assert fast == SSEEvent(0, "message", "b", None, None, b"data: b\n\n", 0)
    for made in (event, fast):
        assert pickle.loads(pickle.dumps(made)) == made
        assert copy.deepcopy(made) == made
        assert dataclasses.replace(made, index=3).index == 3
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.data = "x"  # type: ignore[misc]


def test_kept_events_are_a_sequence_equal_to_the_events_built_one_by_one() -> None:
    # One read: the data-line events take the compact form, the others are kept whole; a read per byte builds
    # every event line by line. The ids set between compact events follow them.
    body = b"data: a\n\nid: 1\n\ndata: b\n\nevent: e\ndata: c\n\ndata:d\n\nid\n\ndata: \xc3\xa9\n\n"
    whole, bytewise = parse(body), parse(*(body[i:i + 1] for i in range(len(body))))
    events = whole.events
    assert len(events) == 5 and events == bytewise.events == list(bytewise.events)
    assert [e.id for e in events] == [None, "1", "1", "1", ""]
    assert events[-1] == events[4] and events[1:3] == list(events)[1:3] and events[::2] == list(events)[::2]
    assert [events.data(i) for i in range(len(events))] == list(events.datas()) == ["a", "b", "c", "d", "é"]
    assert events[3].raw == b"data:d\n\n" and events[4].raw == b"data: \xc3\xa9\n\n"
    with pytest.raises(IndexError):
        events[5]
    assert events != [] and parse(b"").events == [] and "SSEEvents([" in repr(events)


# --- generated streams -------------------------------------------------------------------------------------

LINE_TEXT = st.text(st.characters(exclude_characters="\r\n", exclude_categories=("Cs",)), max_size=12)
RETRY = st.from_regex(r"[0-9]{1,6}", fullmatch=True)
UNKNOWN_FIELD = st.sampled_from(["foo", "Data", "ID", "retry-after"])


@st.composite
def field_line(draw: st.DrawFn, name: str, value: str) -> str:
    if value == "" and draw(st.booleans()):
        return name
    space = value.startswith(" ") or draw(st.booleans())
    return f"{name}:{' ' if space else ''}{value}"


@st.composite
def event_lines(draw: st.DrawFn) -> tuple[list[str], tuple[str | None, list[str], str | None, int | None]]:
    """The lines of one valid event (blank line not included) and what it sets: type, data, id, retry."""
    data = draw(st.lists(LINE_TEXT, min_size=1, max_size=4))
    lines = [draw(field_line("data", value)) for value in data]
    name = draw(st.none() | LINE_TEXT)
    event_id = draw(st.none() | LINE_TEXT)
    retry = draw(st.none() | RETRY)
    extra = [":" + text for text in draw(st.lists(LINE_TEXT, max_size=2))]
    extra += [draw(field_line(draw(UNKNOWN_FIELD), draw(LINE_TEXT))) for _ in range(draw(st.integers(0, 1)))]
    for field_name, value in (("event", name), ("id", event_id), ("retry", retry)):
        if value is not None:
            extra.append(draw(field_line(field_name, value)))
    for line in extra:
        lines.insert(draw(st.integers(0, len(lines))), line)
    return lines, (name, data, event_id, None if retry is None else int(retry))


@st.composite
def valid_streams(draw: st.DrawFn, bom: bool = True) -> tuple[bytes, list[tuple], int]:
    """A valid body, the events it must yield, and its comment count."""
    body, expected, comments, last_id, previous_end = [], [], 0, None, ""
    if bom and draw(st.booleans()):
        body.append("\ufeff")
    for lines, (name, data, event_id, retry) in draw(st.lists(event_lines(), max_size=6)):
        for line in [*lines, ""]:
            end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
            if previous_end == "\r" and line == "" and end == "\n":
                end = "\r\n"  # a lone CR then an empty LF-ended line would be read as one CRLF
            body.append(line + end)
            previous_end = end
            comments += line.startswith(":")
        if event_id is not None and "\0" not in event_id:
            last_id = event_id
        expected.append((name or "message", "\n".join(data), last_id, retry))
    return "".join(body).encode(), expected, comments


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = [0, *sorted({cut % (len(body) + 1) for cut in cuts}), len(body)]
    return [body[a:b] for a, b in zip(points, points[1:])]


@given(valid_streams(), st.lists(st.integers(min_value=0), max_size=12))
def test_read_boundaries_do_not_matter(stream: tuple, cuts: list[int]) -> None:
    body, expected, comments = stream
    whole = parse(body)
    pieces = parse_sse(split(body, cuts))
    assert pieces == whole
    assert summary(whole) == expected
    assert whole.issues == []
    assert whole.comments == comments
    assert b"".join(e.raw for e in whole.events) == body.removeprefix(BOM)
    assert [e.index for e in whole.events] == list(range(len(expected)))


def httpx_sse_events(reads: list[bytes]) -> list[tuple[str, str, str, int | None]]:
    text = codecs.getincrementaldecoder("utf-8")()
    lines, decoder, events = SSELineDecoder(), SSEDecoder(), []

    def take(batch: list[str]) -> None:
        for line in batch:
            event = decoder.decode(line)
            if event is not None:
                events.append((event.event, event.data, event.id, event.retry))

    for read in reads:
        take(lines.decode(text.decode(read)))
    take(lines.decode(text.decode(b"", final=True)))
    take(lines.flush())
    return events


# httpx-sse departs from the standard in three corners, kept out of these streams (our unit tests pin the
# standard's behaviour there):
# - it dispatches on a blank line when the data buffer is empty if an event, id or retry field was seen, or if
#   any last event id was ever set; the standard dispatches nothing. Generated events all have a data line and
#   there are no stray blank lines.
# - it parses retry with int(), which takes "+5", " 5", "1_000" and non-ASCII digits; the standard takes
#   ASCII digits only. Generated retries are ASCII digits.
# - it leaves a leading BOM in place (httpx decodes with "utf-8", not "utf-8-sig"); the standard strips it.
#   Generated streams have no BOM.
# It also reports a missing id as "" where we say None; the comparison maps one to the other.
@given(valid_streams(bom=False), st.lists(st.integers(min_value=0), max_size=12))
def test_agrees_with_httpx_sse(stream: tuple, cuts: list[int]) -> None:
    reads = split(stream[0], cuts)
    ours = [(event, data, event_id or "", retry) for event, data, event_id, retry in summary(parse(*reads))]
    assert ours == httpx_sse_events(reads)


JUNK = st.lists(
    st.sampled_from([b"\n", b"\r", b"\r\n", b"data", b"id", b":", b" ", b"x", b"\0", b"\xff", BOM, EMOJI.encode()])
).map(b"".join)


@given(JUNK, st.lists(st.integers(min_value=0), max_size=12))
def test_any_bytes_parse_the_same_however_read(body: bytes, cuts: list[int]) -> None:
    assert parse_sse(split(body, cuts)) == parse(body)


def one_line_end(body: bytes, end: bytes) -> bytes:
    """The same lines with every line end replaced by `end` (lines never contain CR or LF)."""
    return re.sub(rb"\r\n|\r|\n", end, body)


# Streams that end every line the same way, as real servers do: these are the reads parsed whole, event by
# event, rather than line by line, so read boundaries must not matter there either.
@given(valid_streams(), st.sampled_from([b"\n", b"\r\n", b"\r"]), st.lists(st.integers(min_value=0), max_size=12))
def test_read_boundaries_do_not_matter_with_one_line_end(stream: tuple, end: bytes, cuts: list[int]) -> None:
    body, expected, comments = stream
    body = one_line_end(body, end)
    whole = parse(body)
    assert parse_sse(split(body, cuts)) == whole
    assert summary(whole) == expected
    assert whole.issues == []
    assert whole.comments == comments
    assert b"".join(e.raw for e in whole.events) == body.removeprefix(BOM)


@given(valid_streams(bom=False), st.sampled_from([b"\n", b"\r\n"]), st.lists(st.integers(min_value=0), max_size=12))
def test_agrees_with_httpx_sse_with_one_line_end(stream: tuple, end: bytes, cuts: list[int]) -> None:
    reads = split(one_line_end(stream[0], end), cuts)
    ours = [(event, data, event_id or "", retry) for event, data, event_id, retry in summary(parse(*reads))]
    assert ours == httpx_sse_events(reads)
