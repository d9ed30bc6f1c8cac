"""The reference server, against the floor of its own framework and under load:

- `bench server`: streaming a 10,000-event answer against a bare Starlette endpoint yielding the same bytes the
  same way, on the same uvicorn (goal 1.25x);
- `bench server concurrency`: 500 streamed answers at once: errors (goal 0) and the 99th percentile latency;
- `bench default run`: what `make report` takes against the embedded server (goal 20 s on 2 cores), with the CPU
  time its processes took (user and system), which a busy machine stretches less than the wall time.
"""

from __future__ import annotations

import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

from bench.pipeline import MODEL, long_answer
from bench.timing import fastest
from lmconform.reference import ReferenceServer

STREAMS = 500
ROOT = Path(__file__).resolve().parent.parent


def _events(body: bytes) -> list[bytes]:
    return [event + b"\n\n" for event in body.split(b"\n\n") if event]


class BareServer(ReferenceServer):
    """A Starlette app that streams fixed events, run exactly as the reference server is run."""

    def __init__(self, events: list[bytes]) -> None:
        super().__init__()

        async def stream(request):
            async def chunks():
                for event in events:
                    yield event
            return StreamingResponse(chunks(), media_type="text/event-stream")

        stopping = self.app.state.stopping
        self.app = Starlette(routes=[Route("/v1/chat/completions", stream, methods=["POST"])])
        self.app.state.stopping = stopping


def drain(base_url: str, body: dict) -> int:
    with httpx.Client(timeout=120) as client, client.stream("POST", base_url + "/v1/chat/completions",
                                                           json=body) as answer:
        return sum(len(piece) for piece in answer.iter_bytes())


async def _many(base_url: str, body: dict, count: int) -> tuple[int, list[float]]:
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        async def one() -> float | None:
            started = time.perf_counter()
            try:
                async with client.stream("POST", base_url + "/v1/chat/completions", json=body) as answer:
                    async for _ in answer.aiter_bytes():
                        pass
                    if answer.status_code != 200:
                        return None
            except httpx.HTTPError:
                return None
            return time.perf_counter() - started

        results = await asyncio.gather(*(one() for _ in range(count)))
    return sum(result is None for result in results), sorted(result for result in results if result is not None)


def default_run_seconds() -> tuple[float, float]:
    """`make report`'s command, against the embedded reference server: its wall time and its processes' CPU time."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-q", "-p", "no:cacheprovider",
                   "--results-json", f"{folder}/results.json", "--report", f"{folder}/report.html",
                   "--html", f"{folder}/pytest.html", "--self-contained-html", "--junitxml", f"{folder}/junit.xml"]
        started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
        wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def bench() -> list[str]:
    body = long_answer(10_000).body
    with ReferenceServer() as reference:
        with httpx.Client(timeout=120) as client:
            recorded = client.post(reference.base_url + "/v1/chat/completions", json=body).content
        with BareServer(_events(recorded)) as bare:
            (floor, _), (ours, _) = fastest(5, (drain, bare.base_url, body), (drain, reference.base_url, body))
        tool_call = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "Weather in Paris?"}],
                     "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
                         "type": "object", "properties": {"location": {"type": "string"}}}}}]}
        errors, latencies = asyncio.run(_many(reference.base_url, tool_call, STREAMS))
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else float("nan")
    wall, cpu = default_run_seconds()
    return [f"bench server: {ours / floor:.2f}x bare starlette",
            f"bench server concurrency: {STREAMS} streams, {errors} errors, p99 {p99:.0f} ms",
            f"bench default run: {wall:.1f} s ({cpu:.1f} s of CPU)"]
