"""`make bench`: the strict SSE parser against httpx-sse on the same bytes, the capture of an exchange against a
bare httpx request to the same server, and schema validation of stream events against draining the same events raw.
Ratios, not absolute times: both sides run here, now."""

from __future__ import annotations

import json
import time
import tracemalloc

import httpx
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from lmconform.reference import ReferenceServer
from lmconform.schemas import schema_for, schema_set
from lmconform.target import Target
from lmconform.wire.http import send
from lmconform.wire.sse import parse_sse

READ = 4096
SCHEMA_EVENTS = 10_000  # per measurement, as the `bench schema:` line reports it


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


def timed(function, *args) -> tuple[float, object]:
    started = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - started, result


def fastest(rounds: int, *functions) -> list[tuple[float, object]]:
    """The best of several runs of each (function, *args): one run of a half-second parse swings by 10-20% with
    whatever else the machine does, which would drown the ratio. The runs alternate so that a busy spell slows
    both sides alike, and a run's result is dropped before the next so that no parser is timed against a heap
    still holding the last run's events."""
    best, results = [float("inf")] * len(functions), [None] * len(functions)
    for _ in range(rounds):
        for i, (function, *args) in enumerate(functions):
            results[i] = None
            elapsed, results[i] = timed(function, *args)
            best[i] = min(best[i], elapsed)
    return list(zip(best, results))


def main() -> int:
    body = stream_body(200_000)
    pieces = reads(body)
    (theirs, count), (ours, stream) = fastest(5, (httpx_sse_parse, pieces), (parse_sse, pieces))
    assert len(stream.events) == count
    del stream
    tracemalloc.start()
    parse_sse(pieces)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"SSE parser, {len(body) / 2**20:.1f} MiB in {READ}-byte reads: {ours / theirs:.2f}x the time of httpx-sse "
          f"(which reports no framing errors); peak memory {peak / len(body):.1f}x the body size")
    # The same two figures with a fixed prefix, for whoever tracks them from run to run.
    print(f"bench parser: {ours / theirs:.2f}x httpx-sse, peak memory {peak / len(body):.1f}x body")

    with ReferenceServer() as server, httpx.Client() as bare:
        target = Target(base_url=server.base_url)
        request = {"messages": [{"role": "user", "content": "Say hello."}], "stream": True}
        rounds = 200
        captured, _ = timed(lambda: [send(target, "POST", "/v1/chat/completions", request) for _ in range(rounds)])
        raw, _ = timed(lambda: [bare.post(f"{server.base_url}/v1/chat/completions", json=request).read()
                                for _ in range(rounds)])
    print(f"Capture of a streamed exchange (every read kept with its time): {captured / raw:.2f}x a bare httpx request")
    schema_ratios = [bench_schema(api, body) for api, body in streams()]
    print("bench schema: " + ", ".join(f"{api} {ratio:.1f}x" for api, ratio in schema_ratios)
          + f" the time of draining the same {SCHEMA_EVENTS} events raw (parsing the SSE and each JSON payload)")
    return 0


def streams() -> list[tuple[str, bytes]]:
    """A streamed tool call and a streamed text answer of each API, from the reference server."""
    with ReferenceServer() as server:
        target = Target(base_url=server.base_url)
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        chat = send(target, "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "Weather?"}],
                                                              "tools": tools, "stream": True}).body
        text = send(target, "POST", "/v1/responses", {"input": "Say hello to everyone in this room.",
                                                      "stream": True}).body
    return [("chat", chat), ("responses", text)]


def bench_schema(api: str, stream: bytes) -> tuple[str, float]:
    """Validation of SCHEMA_EVENTS events, each by the schema of its kind and type, against draining them raw."""
    events = [event.data for event in parse_sse([stream]).events if event.data != "[DONE]"]
    repeated = (events * (SCHEMA_EVENTS // len(events) + 1))[:SCHEMA_EVENTS]
    body = "".join(f"data: {data}\n\n" for data in repeated).encode()
    pieces = reads(body)
    schemas = schema_set("reference")

    def drain() -> list:
        return [json.loads(event.data) for event in parse_sse(pieces).events]

    payloads = drain()
    for payload in payloads[:len(events)]:  # every validator built before the clock starts
        assert not schemas.findings(schema_for(api, "event", payload), payload)

    def validate() -> int:
        return sum(len(schemas.findings(schema_for(api, "event", payload), payload)) for payload in payloads)

    (raw, _), (validating, found) = fastest(3, (drain,), (validate,))
    assert found == 0
    return api, validating / raw


if __name__ == "__main__":
    raise SystemExit(main())
