"""`POST /v1/responses/input_tokens` and `POST /v1/responses/compact` on the reference server: the count is what the
same request is charged, the compaction an opaque item of the conversation, taken back as input on the next turn with
the history it stands for; each fault of them changes what it names, the variant that offers neither answers as a
route that does not exist, and the one that refuses the item sent back names it."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import Target

ITEMS = [{"role": "user", "content": "Remember the word 'saffron' for later."},
         {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "I will."}]},
         {"role": "user", "content": "Now tell me a short story."}]
BODY = {"instructions": "You are terse.", "input": ITEMS}


def post(client: httpx.Client, path: str, body: dict, fault: str | None = None) -> httpx.Response:
    return client.post(f"/faults/{fault}{path}" if fault else path, json=body)


def test_the_count_is_the_input_tokens_the_same_request_is_charged_and_follows_a_chain(client):
    counted = post(client, "/v1/responses/input_tokens", BODY).json()
    charged = post(client, "/v1/responses", BODY).json()["usage"]["input_tokens"]
    assert counted == {"object": "response.input_tokens", "input_tokens": charged}
    first = post(client, "/v1/responses", {"input": "Remember the word apple."}).json()
    chained = {"input": "And then?", "previous_response_id": first["id"]}
    assert post(client, "/v1/responses/input_tokens", chained).json()["input_tokens"] == \
        post(client, "/v1/responses", chained).json()["usage"]["input_tokens"]
    refused = post(client, "/v1/responses/input_tokens", {"model": "m"})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "input"


def test_a_compaction_holds_the_conversation_in_one_opaque_item(client):
    compacted = post(client, "/v1/responses/compact", BODY).json()
    assert compacted["object"] == "response.compaction" and compacted["id"].startswith("resp_")
    (item,) = compacted["output"]
    assert item["type"] == "compaction" and item["id"].startswith("cmp_")
    assert json.loads(base64.b64decode(item["encrypted_content"]))[0] == {"role": "user", "content": ITEMS[0]["content"]}
    assert compacted["usage"]["input_tokens"] == post(client, "/v1/responses/input_tokens", BODY).json()["input_tokens"]


QUESTION = {"role": "user", "content": "Which word did I ask you to remember?"}


def next_turn(client: httpx.Client, fault: str | None = None, compacted: dict | None = None) -> httpx.Response:
    """The compaction of ITEMS' first two items sent back with a question only they answer, as Codex sends it."""
    compacted = compacted or post(client, "/v1/responses/compact", {**BODY, "input": ITEMS[:2]}).json()
    return post(client, "/v1/responses", {"input": [*compacted["output"], QUESTION], "store": False}, fault)


def said(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return " ".join(part["text"] for item in response.json()["output"] if item["type"] == "message"
                    for part in item["content"])


def test_a_compaction_sent_back_as_input_stands_for_the_history_it_holds(client):
    answered = next_turn(client)
    assert said(answered) == 'You asked me to remember "saffron".'
    alone = post(client, "/v1/responses", {"input": [QUESTION], "store": False}).json()["usage"]["input_tokens"]
    assert answered.json()["usage"]["input_tokens"] > alone
    forged = {"output": [{"type": "compaction", "encrypted_content": "not what the server wrote"}]}
    refused = next_turn(client, compacted=forged)
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "input.0.encrypted_content"


FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("responses-compaction-not-offered")
def _(client: httpx.Client) -> None:
    for path in ("/v1/responses/input_tokens", "/v1/responses/compact"):
        missing = post(client, path, BODY, "responses-compaction-not-offered")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        said = post(client, path, BODY, "responses-compaction-not-offered,unknown-route-200")
        assert said.json() == {"error": f"Unexpected endpoint or method. (POST {path})"}
    assert post(client, "/v1/responses", BODY, "responses-compaction-not-offered").status_code == 200


@effect("input-tokens-last-item")
def _(client: httpx.Client) -> None:
    short = post(client, "/v1/responses/input_tokens", BODY, "input-tokens-last-item").json()["input_tokens"]
    alone = post(client, "/v1/responses", {"instructions": BODY["instructions"], "input": ITEMS[-1:]}).json()
    assert short == alone["usage"]["input_tokens"] < post(client, "/v1/responses/input_tokens", BODY).json()["input_tokens"]


@effect("compact-as-response")
def _(client: httpx.Client) -> None:
    answered = post(client, "/v1/responses/compact", BODY, "compact-as-response").json()
    assert answered["object"] == "response" and answered["output"][0]["type"] == "message"


@effect("compaction-input-refused")
def _(client: httpx.Client) -> None:
    refused = next_turn(client, "compaction-input-refused")
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "input.0.type"
    assert "'compaction'" not in refused.json()["error"]["message"]
    assert post(client, "/v1/responses/compact", BODY, "compaction-input-refused").status_code == 200


@effect("compaction-input-500")
def _(client: httpx.Client) -> None:
    assert next_turn(client, "compaction-input-500").status_code == 500
    assert post(client, "/v1/responses", BODY, "compaction-input-500").status_code == 200


@effect("compaction-input-forgotten")
def _(client: httpx.Client) -> None:
    forgot = next_turn(client, "compaction-input-forgotten")
    assert said(forgot) != 'You asked me to remember "saffron".'
    alone = post(client, "/v1/responses", {"input": [QUESTION], "store": False}).json()["usage"]["input_tokens"]
    assert forgot.json()["usage"]["input_tokens"] == alone


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


ROUND_TRIP = "responses.compact.round_trip_used"


def round_trips(base_url: str) -> dict:
    run = run_suite(Target(base_url=base_url), apis=("responses",), include=[ROUND_TRIP],
                    settings=RunSettings(fuzz_examples=0))
    (verdict,) = [verdict.record() for verdict in run.verdicts]
    assert verdict["case"] == "responses/compaction-round-trip"
    return verdict


def test_the_round_trip_passes_on_the_clean_server_is_a_limit_when_refused_and_fails_on_a_500_or_a_forgotten_item(server):
    clean = round_trips(server.base_url)
    assert clean["outcome"] == "OK" and "accepted with its history" in clean["message"]
    refused = round_trips(f"{server.base_url}/faults/compaction-input-refused")
    assert refused["outcome"] == "OK" and "refused, HTTP 400 naming it" in refused["message"]
    assert round_trips(f"{server.base_url}/faults/compaction-input-500")["outcome"] == "FAILED"
    forgotten = round_trips(f"{server.base_url}/faults/compaction-input-forgotten")
    assert forgotten["outcome"] == "FAILED" and "forgot the history" in forgotten["message"]
    assert round_trips(f"{server.base_url}/faults/responses-compaction-not-offered")["outcome"] == "UNSUPPORTED"
