"""A Responses stream's life before its answer, on a long prompt: the longest stretch without an event, measured from
the reads' arrival times, against the idle limit a client holds streams to (Codex's stream idle timeout, lowered here
so that a prefill of a few seconds passes it), and the kind of keep-alive sent meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.apis.responses.reference.faults.lifecycle import PREFILL_S
from lmconform.checks.silence import longest_silence
from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import DEFAULT_STREAM_IDLE_LIMIT_S, Target
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

SILENCE = "responses.stream.silence_within_idle_limit"
CASES = Path(__file__).resolve().parent.parent / "lmconform" / "apis" / "responses" / "cases"
LONG = json.loads((CASES / "long-prompt-stream.json").read_text())["request"]["body"]
# Under the fault's prefill, over what the clean server takes however busy the machine: the fault's silence is a
# floor the server keeps, the clean answer's a few milliseconds.
LIMIT_S = PREFILL_S / 2


def exchange(*reads: tuple[float, bytes], error: str | None = None) -> HttpExchange:
    sent = HttpExchange(request=HttpRequest("POST", "http://x/v1/responses", {}, {}), status=200,
                        headers={"content-type": "text/event-stream"}, error=error)
    sent.chunks = [BodyChunk(at, data) for at, data in reads]
    sent.duration_s = reads[-1][0] + 1.0
    return sent


def test_the_longest_silence_is_found_with_what_kept_it_alive():
    created = b'data: {"type":"response.created"}\n\n'
    progress = b'data: {"type":"response.in_progress"}\n\n'
    text = b'data: {"type":"response.output_text.delta"}\n\n'
    silence = longest_silence(exchange((0.1, created), (0.2, progress), (2.0, b": keep-alive\n\n"),
                                       (3.0, b":\n\n"), (7.0, text)))
    assert (silence.seconds, silence.comments_in_it, silence.progress_events) == (6.8, 2, 1)
    assert silence.where == "between event #1 (response.in_progress) and event #2"
    assert "2 SSE comment lines only" in silence.kept_alive_by
    assert silence.keep_alive_kind == "keep-alives sent: 2 SSE comment lines, 1 progress event before the output"
    first = longest_silence(exchange((5.0, created), (5.1, text)))
    assert (first.seconds, first.where, first.kept_alive_by) == (5.0, "before the first event", "nothing arrived during it")
    cut = longest_silence(exchange((0.1, created), error="timeout"))
    assert cut.where == "after the last event, #0 (response.created), until the answer was cut" and cut.seconds == 1.0


FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("prefill-comment-keepalives")
def _(client: httpx.Client) -> None:
    with client.stream("POST", "/faults/prefill-comment-keepalives/v1/responses", json=LONG) as answer:
        lines = [line for line in answer.iter_lines() if line]
    first_event = next(index for index, line in enumerate(lines) if not line.startswith(":"))
    assert first_event >= 2 and set(lines[:first_event]) == {": keep-alive"}
    short = client.post("/faults/prefill-comment-keepalives/v1/responses", json={"input": "Hi", "stream": True})
    assert short.text.startswith("event: response.created")


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


def verdicts(base_url: str, limit: float) -> list[dict]:
    run = run_suite(Target(base_url=base_url, stream_idle_limit_s=limit), apis=("responses",), include=[SILENCE],
                    settings=RunSettings(fuzz_examples=0))
    return [verdict.record() for verdict in run.verdicts]


def test_a_prefill_kept_alive_by_comments_past_the_idle_limit_fails_and_the_clean_server_passes(server):
    assert DEFAULT_STREAM_IDLE_LIMIT_S == 300.0  # Codex's stream_idle_timeout_ms unless its provider sets it
    (clean,) = verdicts(server.base_url, LIMIT_S)
    assert clean["case"] == "responses/long-prompt-stream" and clean["outcome"] == "OK"
    assert "keep-alives sent: 1 progress event before the output" in clean["message"]
    (kept_alive,) = verdicts(f"{server.base_url}/faults/prefill-comment-keepalives", LIMIT_S)
    assert kept_alive["outcome"] == "FAILED"
    assert "before the first event, kept alive by" in kept_alive["message"] and "comment line" in kept_alive["message"]
    (codex,) = verdicts(f"{server.base_url}/faults/prefill-comment-keepalives", DEFAULT_STREAM_IDLE_LIMIT_S)
    assert codex["outcome"] == "OK"
