"""Schema validation of stream events against draining the same events raw."""

from __future__ import annotations

import json

from bench.parser import reads
from bench.timing import fastest
from lmconform.reference import ReferenceServer
from lmconform.schemas import schema_for, schema_set
from lmconform.target import Target
from lmconform.wire.http import send
from lmconform.wire.sse import parse_sse

SCHEMA_EVENTS = 10_000  # per measurement, as the `bench schema:` line reports it


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


def bench() -> list[str]:
    ratios = [bench_schema(api, body) for api, body in streams()]
    return ["bench schema: " + ", ".join(f"{api} {ratio:.1f}x" for api, ratio in ratios)
            + f" the time of draining the same {SCHEMA_EVENTS} events raw (parsing the SSE and each JSON payload)"]
