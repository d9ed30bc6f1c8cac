"""`POST /v1/responses/input_tokens` and `POST /v1/responses/compact` on the reference server: the count is what the
same request is charged, the compaction an opaque item of the conversation; each fault of them changes what it names,
and the variant that offers neither answers as a route that does not exist."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from fault_effects import FaultEffects

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


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)
