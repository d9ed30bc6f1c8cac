"""The strict SSE parser against httpx-sse on the same bytes (goals: 1.5x the time, 2x the body in memory), and
against itself on a longer line (goal: linear).

The time is the parse and an SSEEvent made for every event, as httpx-sse makes one for each; the memory is what
the parsed stream keeps (lmconform.wire.sse.SSEEvents makes an event when it is asked for). One line fed in many
reads is where a parser that re-joins or re-scans the pending line on each read turns quadratic: its cost per byte
at 128 MiB over its cost at 32 MiB is 1 for a linear parser and 4 for a quadratic one. Both sizes are past the
largest buffer the C allocator may serve from memory the process already holds (32 MiB for glibc on 64 bits), so
each gets fresh pages, at the same cost per byte. Under it, which buffers are fresh depends on what the process freed
before: 8 MiB against 32 MiB read 1.5 in a new process and 3.5 after the 200,000-event body above, for the same
parse."""

from __future__ import annotations

import json
import tracemalloc

from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from bench.timing import fastest
from lmconform.wire.sse import parse_sse

READ = 4096


def stream_body(events: int) -> bytes:
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "word "}}]}
    line = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    return line * events + b"data: [DONE]\n\n"


def reads(body: bytes) -> list[bytes]:
    return [body[i:i + READ] for i in range(0, len(body), READ)]


def httpx_sse_parse(pieces: list[bytes]) -> int:
    lines, decoder, count = SSELineDecoder(), SSEDecoder(), 0
    for piece in pieces:
        for line in lines.decode(piece.decode("utf-8", errors="replace")):
            if decoder.decode(line) is not None:
                count += 1
    return count


def lmconform_parse(pieces: list[bytes]) -> int:
    return sum(1 for _ in parse_sse(pieces).events)


def one_line(size: int) -> list[bytes]:
    return reads(b"data: " + b"x" * size + b"\n\n")


def bench() -> list[str]:
    body = stream_body(200_000)
    pieces = reads(body)
    (theirs, count), (ours, made) = fastest(5, (httpx_sse_parse, pieces), (lmconform_parse, pieces))
    assert made == count
    tracemalloc.start()
    parse_sse(pieces)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    short, long = 32 * 1024 * 1024, 128 * 1024 * 1024
    (short_s, _), (long_s, _) = fastest(3, (lmconform_parse, one_line(short)), (lmconform_parse, one_line(long)))
    return [f"bench parser: {ours / theirs:.2f}x httpx-sse, peak memory {peak / len(body):.1f}x body",
            f"bench parser long line: {(long_s / long) / (short_s / short):.2f} per byte at 128 MiB over 32 MiB"]
