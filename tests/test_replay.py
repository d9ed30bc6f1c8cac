"""Stateless replay (`store: false`, the whole transcript in `input`, as Codex sends it): the reference server takes
each form Codex replays (reasoning items with `encrypted_content`, output items without `id` or `status`, a custom
tool's call and output, developer and system messages mid-history, an assistant's `phase`) and answers from it; each
fault of it changes what it names, and the replay checks fail under it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import Target

CASES = Path(__file__).resolve().parent.parent / "lmconform" / "apis" / "responses" / "cases"
REPLAYS = {path.stem: json.loads(path.read_text())["request"]["body"] for path in sorted(CASES.glob("replay-*.json"))}
CHECKS = ("responses.replay.accepted_or_refused", "responses.replay.history_used")


def answer(client: httpx.Client, body: dict, fault: str | None = None) -> httpx.Response:
    return client.post(f"/faults/{fault}/v1/responses" if fault else "/v1/responses", json=body)


def text(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return " ".join(part["text"] for item in response.json()["output"] if item["type"] == "message"
                    for part in item["content"])


@pytest.mark.parametrize("name", sorted(REPLAYS))
def test_each_replayed_transcript_is_answered_from_its_history(client, name):
    assert len(REPLAYS) == 5
    assert text(answer(client, REPLAYS[name])) == 'You asked me to remember "saffron".'


FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("replay-mid-history-system-500")
def _(client: httpx.Client) -> None:
    crashed = answer(client, REPLAYS["replay-developer-mid-history"], "replay-mid-history-system-500")
    assert crashed.status_code == 500
    assert text(answer(client, REPLAYS["replay-items-without-ids"], "replay-mid-history-system-500"))
    assert answer(client, {"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]},
                  "replay-mid-history-system-500").status_code == 200


@effect("replay-forgotten")
def _(client: httpx.Client) -> None:
    body = REPLAYS["replay-items-without-ids"]
    assert text(answer(client, body, "replay-forgotten")) == "I don't know which word you mean."
    alone = answer(client, {**body, "input": body["input"][-1:]}).json()["usage"]["input_tokens"]
    assert answer(client, body, "replay-forgotten").json()["usage"]["input_tokens"] == alone
    assert text(answer(client, {**body, "store": True}, "replay-forgotten")) == 'You asked me to remember "saffron".'


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


def verdicts(base_url: str) -> dict[tuple[str, str], str]:
    run = run_suite(Target(base_url=base_url), apis=("responses",), include=list(CHECKS),
                    settings=RunSettings(fuzz_examples=0))
    return {(verdict.case_id.removeprefix("responses/"), verdict.check.id): str(verdict.outcome)
            for verdict in run.verdicts}


def test_the_clean_server_passes_each_replay_and_each_fault_fails_the_check_it_breaks(server):
    clean = verdicts(server.base_url)
    assert len(clean) == 2 * len(REPLAYS) and set(clean.values()) == {"OK"}
    crashed = verdicts(f"{server.base_url}/faults/replay-mid-history-system-500")
    assert {pair for pair, outcome in crashed.items() if outcome != "OK"} == \
        {("replay-developer-mid-history", "responses.replay.accepted_or_refused")}
    forgotten = verdicts(f"{server.base_url}/faults/replay-forgotten")
    assert {pair for pair, outcome in forgotten.items() if outcome != "OK"} == \
        {(name, "responses.replay.history_used") for name in REPLAYS}
