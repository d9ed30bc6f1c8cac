"""Schema validation of stream events, each by the schema of its kind and type, against draining the same events
raw (parsing the SSE and each JSON payload), per 10k events of each API."""

from __future__ import annotations

import json

from bench.parser import reads
from bench.timing import fastest
from lmconform.reference import ReferenceServer
from lmconform.schemas import schema_for, schema_set
from lmconform.target import Target
from lmconform.wire.http import send
from lmconform.wire.sse import parse_sse

EVENTS = 10_000  # per measurement, as the `bench schema:` line reports it


def streams() -> list[tuple[str, bytes]]:
    """A streamed tool call (chat) and a streamed text answer (Responses), from the reference server."""
    with ReferenceServer() as server:
        target = Target(base_url=server.base_url)
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        chat = send(target, "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "Weather?"}],
                                                              "tools": tools, "stream": True}).body
        text = send(target, "POST", "/v1/responses", {"input": "Say hello to everyone in this room.",
                                                      "stream": True}).body
    return [("chat", chat), ("responses", text)]


def ratio(api: str, stream: bytes) -> float:
    events = [event.data for event in parse_sse([stream]).events if event.data != "[DONE]"]
    repeated = (events * (EVENTS // len(events) + 1))[:EVENTS]
    pieces = reads("".join(f"data: {data}\n\n" for data in repeated).encode())
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
    return validating / raw


def bench() -> list[str]:
    ratios = ", ".join(f"{api} {ratio(api, stream):.1f}x" for api, stream in streams())
    return [f"bench schema: {ratios} the time of draining the same {EVENTS} events raw"]
