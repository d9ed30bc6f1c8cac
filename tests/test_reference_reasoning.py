"""Reasoning and refusals on the reference server over real HTTP: the scripted model refuses when asked to, every
fault and variant of reasoning and JSON mode changes what it names, and each API's reading puts reasoning and
refusals in channels of their own."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fault_effects import FaultEffects
from test_reference_responses import create, of_type, stream
from test_reference_server import TEXT_REQUEST, ask, deltas, post

from lmconform.apis.chat.normalize import normalize_chat_body
from lmconform.apis.responses.normalize import normalize_responses_body

THOUGHT = "The user wants a greeting for Ada Lovelace, so I will keep it short."


def message(response: httpx.Response) -> dict[str, Any]:
    return response.json()["choices"][0]["message"]


def thinking(**extra: Any) -> dict[str, Any]:
    return ask("Hi", reasoning_effort="low", **extra)


def carrying(name: str) -> dict[str, Any]:
    """A second turn that sends the first turn's reasoning back under `name`."""
    return {"model": "test-model", "messages": [{"role": "user", "content": "Say hello."},
                                                {"role": "assistant", "content": "Hello!", name: THOUGHT},
                                                {"role": "user", "content": "Again."}]}


# --- the clean server and the readings --------------------------------------------------------------------------


def test_the_model_refuses_when_asked_to(client: httpx.Client) -> None:
    answer = message(post(client, ask("Refuse this, please.")))
    assert answer["content"] is None and answer["refusal"] == "I can't help with that."
    assert "".join(delta.get("refusal", "") for delta in deltas(post(client, ask("Refuse it.", stream=True)))) == \
        "I can't help with that."
    (item,) = create(client, {"input": "Refuse it."})["output"]
    assert item["content"] == [{"type": "refusal", "refusal": "I can't help with that."}]
    events = stream(client, {"input": "Refuse it."})
    assert "".join(event["delta"] for event in of_type(events, "response.refusal.delta")) == "I can't help with that."


def test_a_refusal_is_read_as_its_own_channel() -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "No."}, "finish_reason": "stop"}]}
    generation = normalize_chat_body(body)
    assert generation.refused and generation.text() == "" and not generation.is_empty()
    response = {"status": "completed", "output": [{"type": "message", "content": [{"type": "refusal",
                                                                                  "refusal": "No."}]}]}
    assert normalize_responses_body(response).text("refusal") == "No."


def test_both_reasoning_names_with_the_same_text_are_read_once() -> None:
    message_ = {"role": "assistant", "content": "Hi", "reasoning": "Think.", "reasoning_content": "Think."}
    assert normalize_chat_body({"choices": [{"message": message_}]}).text("reasoning") == "Think."


def test_a_previous_turn_s_reasoning_is_accepted_under_either_name(client: httpx.Client) -> None:
    for name in ("reasoning", "reasoning_content"):
        assert message(post(client, carrying(name)))["content"] == "You said: Again."


# --- faults and variants: each changes what it names ------------------------------------------------------------

FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("reasoning-input-refused")
def _(client: httpx.Client) -> None:
    for name in ("reasoning", "reasoning_content"):
        refused = post(client, carrying(name), "reasoning-input-refused")
        assert refused.status_code == 400 and name in refused.json()["error"]
    assert post(client, ask("Hi"), "reasoning-input-refused").status_code == 200


@effect("reasoning-effort-500")
def _(client: httpx.Client) -> None:
    assert post(client, thinking(), "reasoning-effort-500").status_code == 500
    assert post(client, ask("Hi"), "reasoning-effort-500").status_code == 200


@effect("think-close-only")
def _(client: httpx.Client) -> None:
    answer = message(post(client, thinking(), "think-close-only"))
    assert answer["content"] == "Thinking about: Hi\n</think>\n\nYou said: Hi" and "reasoning" not in answer


@effect("think-tags-split")
def _(client: httpx.Client) -> None:
    contents = [delta.get("content") for delta in deltas(post(client, {**TEXT_REQUEST, "reasoning_effort": "low"},
                                                                "think-tags-split"))]
    assert contents[1:3] == ["<thi", "nk>"] and "</th" in contents and contents[contents.index("</th") + 1] == "ink>"
    assert not any("reasoning" in delta for delta in deltas(post(client, {**TEXT_REQUEST, "reasoning_effort": "low"},
                                                                 "think-tags-split")))


@effect("reasoning-repeated-in-content")
def _(client: httpx.Client) -> None:
    answer = message(post(client, thinking(), "reasoning-repeated-in-content"))
    assert answer["reasoning"] == "Thinking about: Hi" and answer["content"].startswith("Thinking about: Hi")


@effect("reasoning-fields-mixed")
def _(client: httpx.Client) -> None:
    streamed = deltas(post(client, {**TEXT_REQUEST, "reasoning_effort": "low"}, "reasoning-fields-mixed"))
    assert any("reasoning" in delta for delta in streamed) and any("reasoning_content" in delta for delta in streamed)


@effect("reasoning-input-echoed")
def _(client: httpx.Client) -> None:
    assert THOUGHT in message(post(client, carrying("reasoning_content"), "reasoning-input-echoed"))["content"]


@effect("json-object-ignored")
def _(client: httpx.Client) -> None:
    answer = message(post(client, ask("Hi", response_format={"type": "json_object"}), "json-object-ignored"))
    assert answer["content"] == "You said: Hi"


@effect("reasoning-absent")
def _(client: httpx.Client) -> None:
    assert "reasoning" not in message(post(client, thinking(), "reasoning-absent"))


@effect("reasoning-empty")
def _(client: httpx.Client) -> None:
    assert message(post(client, ask("Hi"), "reasoning-empty"))["reasoning"] == ""
    assert all("reasoning" in delta for delta in deltas(post(client, TEXT_REQUEST, "reasoning-empty")))


@effect("reasoning-content-field")
def _(client: httpx.Client) -> None:
    streamed = deltas(post(client, {**TEXT_REQUEST, "reasoning_effort": "low"}, "reasoning-content-field"))
    assert any("reasoning_content" in delta for delta in streamed)
    assert not any("reasoning" in delta for delta in streamed)
    assert message(post(client, thinking(), "reasoning-content-field"))["reasoning_content"] == "Thinking about: Hi"


@effect("json-answers-refused")
def _(client: httpx.Client) -> None:
    answer = message(post(client, ask("Hi", response_format={"type": "json_object"}), "json-answers-refused"))
    assert answer["content"] is None and answer["refusal"]
    assert message(post(client, ask("Hi"), "json-answers-refused"))["content"] == "You said: Hi"


@effect("responses-reasoning-in-text")
def _(client: httpx.Client) -> None:
    output = create(client, {"input": "Hi", "reasoning": {"effort": "low"}}, "responses-reasoning-in-text")["output"]
    assert [item["type"] for item in output] == ["message"]
    assert output[0]["content"][0]["text"] == "<think>Thinking about: Hi</think>You said: Hi"


@effect("messages-thinking-in-text")
def _(client: httpx.Client) -> None:
    content = client.post("/faults/messages-thinking-in-text/v1/messages", json=MESSAGES_THINKING).json()["content"]
    assert [block["type"] for block in content] == ["text"] and content[0]["text"].startswith("<think>")


@effect("responses-reasoning-input-refused")
def _(client: httpx.Client) -> None:
    sent_back = {"input": [{"role": "user", "content": "Say hello."},
                           {"type": "reasoning", "id": "rs_1", "summary": [],
                            "content": [{"type": "reasoning_text", "text": THOUGHT}]},
                           {"role": "user", "content": "Again."}]}
    refused = client.post("/faults/responses-reasoning-input-refused/v1/responses", json={"model": "m", **sent_back})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "input.1.type"
    assert create(client, sent_back)["status"] == "completed"
    assert create(client, {"input": "Hi"}, "responses-reasoning-input-refused")["status"] == "completed"


@effect("responses-reasoning-effort-500")
def _(client: httpx.Client) -> None:
    crashed = client.post("/faults/responses-reasoning-effort-500/v1/responses",
                          json={"model": "m", "input": "Hi", "reasoning": {"effort": "low"}})
    assert crashed.status_code == 500
    assert create(client, {"input": "Hi"}, "responses-reasoning-effort-500")["status"] == "completed"


@effect("responses-refusal-dropped")
def _(client: httpx.Client) -> None:
    (item,) = create(client, {"input": "Refuse it."}, "responses-refusal-dropped")["output"]
    assert item["type"] == "message" and item["content"] == []
    events = stream(client, {"input": "Refuse it."}, "responses-refusal-dropped")
    assert not of_type(events, "response.refusal.delta") and of_type(events, "response.completed")
    assert create(client, {"input": "Hi"}, "responses-refusal-dropped")["output"][0]["content"][0]["text"] == \
        "You said: Hi"


MESSAGES_THINKING = {"model": "m", "max_tokens": 1100, "thinking": {"type": "enabled", "budget_tokens": 1024},
                     "messages": [{"role": "user", "content": "Hi"}]}
MESSAGES_THINKING_SENT_BACK = {"model": "m", "max_tokens": 32, "messages": [
    {"role": "user", "content": "Say hello."},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": THOUGHT, "signature": "c2ln"},
                                      {"type": "text", "text": "Hello!"}]},
    {"role": "user", "content": "Again."}]}


@effect("messages-thinking-input-refused")
def _(client: httpx.Client) -> None:
    refused = client.post("/faults/messages-thinking-input-refused/v1/messages", json=MESSAGES_THINKING_SENT_BACK)
    assert refused.status_code == 400 and "messages.1.content.0" in refused.json()["error"]["message"]
    assert client.post("/v1/messages", json=MESSAGES_THINKING_SENT_BACK).status_code == 200
    assert client.post("/faults/messages-thinking-input-refused/v1/messages", json=MESSAGES_THINKING).status_code == 200


@effect("messages-thinking-500")
def _(client: httpx.Client) -> None:
    crashed = client.post("/faults/messages-thinking-500/v1/messages", json=MESSAGES_THINKING)
    assert crashed.status_code == 500 and crashed.json()["error"]["type"] == "api_error"
    assert client.post("/faults/messages-thinking-500/v1/messages", json=MESSAGES_THINKING_SENT_BACK).status_code == 200


@effect("native-reasoning-in-message")
def _(client: httpx.Client) -> None:
    body = {"model": "m", "input": "Hi", "reasoning": "on"}
    output = client.post("/faults/native-reasoning-in-message/api/v1/chat", json=body).json()["output"]
    assert [item["type"] for item in output] == ["message"] and output[0]["content"].startswith("<think>")


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)

