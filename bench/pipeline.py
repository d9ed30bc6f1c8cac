"""What a user pays for one long streamed answer, against the floor of each part:

- `bench pipeline`: capture + parse + normalise + every wire, semantic and schema check, against draining the same
  bytes from the same server with bare httpx (goal 2x), and how the cost per event grows from 2,500 to 10,000
  events (goal 1.2: linear);
- `bench scale`: one answer of 100,000 events judged by every wire check, its peak memory against its size, and the
  same ratio at 10,000 events (goal: proportional, the two ratios within 10% of each other);
- `bench clients`: every client verdict on the same answer, against the real openai SDK's stream helper consuming
  it live from the server (goal 1.2x: one replay per client, shared by its checks).
"""

from __future__ import annotations

import tracemalloc

import httpx
import openai

from bench.timing import fastest
from lmconform.apis.chat.reference import door as reference_chat
from lmconform.cases import Case
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import evaluate
from lmconform.reference import ReferenceServer
from lmconform.run.play import play
from lmconform.target import Target

MODEL = "lmconform-reference"


def long_answer(events: int) -> Case:
    """A streamed chat completion the reference server answers with about `events` chunks (a word each)."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": " ".join(["word"] * (events - 3))}],
            "stream": True}
    return Case(id="chat/long-answer", api="chat", slug="long-answer", description="A long streamed answer",
                provenance={"source": "bench"}, method="POST", path="/v1/chat/completions", body=body, raw_body=None,
                expect_status="success", feature=None)


def drain(base_url: str, case: Case) -> int:
    with httpx.Client(timeout=120) as client, client.stream("POST", base_url + case.path, json=case.body) as answer:
        return sum(len(piece) for piece in answer.iter_bytes())


def judged(target: Target, case: Case, kind: str) -> int:
    observed = play(case, target)
    checks = [check for check in REGISTRY.values() if check.applies(case) and check.kind == kind]
    return len([evaluate(check, observed) for check in checks])


def sdk_live(base_url: str, case: Case) -> object:
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="bench", max_retries=0)
    body = {key: value for key, value in case.body.items() if key != "stream"}
    with client.chat.completions.stream(**body) as stream:
        for _ in stream:
            pass
        return stream.get_final_completion()


def replayed_by_clients(observed_case: tuple) -> int:
    observed, checks = observed_case
    return len([evaluate(check, observed) for check in checks])


def peak_memory_per_body_byte(target: Target, events: int) -> float:
    case = long_answer(events)
    tracemalloc.start()
    observed = play(case, target)
    for check in REGISTRY.values():
        if check.applies(case) and check.kind == "wire":
            evaluate(check, observed)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / len(observed.exchange.body)


def scale(target: Target) -> str:
    large, small = (peak_memory_per_body_byte(target, events) for events in (100_000, 10_000))
    return f"bench scale: 100,000 events, peak memory {large:.1f}x the body (10,000 events: {small:.1f}x)"


def bench() -> list[str]:
    lines = []
    # The reference server answers a word per chunk, so a long answer needs a long prompt; its model's context
    # (CONTEXT_WORDS, which refuses longer prompts as a real server must) is widened for this server, in this process.
    reference_chat.CONTEXT_WORDS = 200_000
    with ReferenceServer() as server:
        target = Target(base_url=server.base_url, model=MODEL)
        per_event = {}
        for events in (2_500, 10_000):
            case = long_answer(events)
            (raw, _), (ours, _) = fastest(3, (drain, server.base_url, case), (judged, target, case, "wire"))
            per_event[events] = ours / events
            if events == 10_000:
                lines.append(f"bench pipeline: {ours / raw:.2f}x raw drain")
        lines.append(f"bench pipeline growth: {per_event[10_000] / per_event[2_500]:.2f}")
        lines.append(scale(target))
        case = long_answer(10_000)
        clients = [check for check in REGISTRY.values() if check.applies(case) and check.kind == "client"]

        def fresh() -> tuple:  # a new answer each round: a replay is cached on the exchange it read
            return play(case, target), clients

        rounds = [fresh() for _ in range(2)]
        (live, _), (ours, _) = fastest(1, (sdk_live, server.base_url, case), (replayed_by_clients, rounds[0]))
        (live2, _), (ours2, _) = fastest(1, (sdk_live, server.base_url, case), (replayed_by_clients, rounds[1]))
        lines.append(f"bench clients: {min(ours, ours2) / min(live, live2):.2f}x the SDK live")
    return lines
