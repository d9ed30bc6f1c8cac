"""Every fault of the reference bridge changes the wire as its catalogue entry says: one test per fault, each
against a bridge started with that fault alone (test_bridge.py shows the clean wire)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from bridge_pipe import (
    ECHO,
    SLOW_ECHO,
    WEATHER,
    BridgeProcess,
    answer_text,
    assistant,
    bridges_reaped,  # noqa: F401  (a fixture, used by name below)
    closed_port,
    kinds,
    parts_of,
    user,
)

from lmconform.bridge import FAULTS

pytestmark = [pytest.mark.usefixtures("bridges_reaped"), pytest.mark.waits]

# Its whole echo arrives, cancel or not: its length is what the fault's test waits for.
SHORT_QUESTION = "Hello, a question"
EffectTest = Callable[[], None]
FAULT_EFFECTS: dict[str, EffectTest] = {}


def effect(name: str) -> Callable[[EffectTest], EffectTest]:
    def register(test: EffectTest) -> EffectTest:
        FAULT_EFFECTS[name] = test
        return test

    return register


def echo_with(fault: str, *options: str) -> BridgeProcess:
    return BridgeProcess(*ECHO, "--fault", fault, *options)


@effect("part-after-complete")
def _() -> None:
    bridge = echo_with("part-after-complete")
    order = kinds(bridge.turn([user("Hi")]))
    assert order[-3:] == ["complete", "part", "result"]
    bridge.close()


@effect("no-complete")
def _() -> None:
    bridge = echo_with("no-complete")
    order = kinds(bridge.turn([user("Hi")]))
    assert "complete" not in order and order[-1] == "result" and "part" in order
    bridge.close()


@effect("request-id-as-string")
def _() -> None:
    bridge = echo_with("request-id-as-string")
    messages = bridge.turn([user("Hi")], request_id=7)
    assert {json.dumps(m["params"]["requestId"]) for m in messages[:-1]} == {'"7"'}
    assert messages[-1]["id"] == 7  # the result's id is untouched
    bridge.close()


@effect("tool-call-not-last")
def _() -> None:
    bridge = echo_with("tool-call-not-last")
    types = [part["type"] for part in parts_of(bridge.turn([user("Hi")], tools=[WEATHER], toolMode="required"), 1)]
    assert "tool_call" in types and types[-1] == "text"
    bridge.close()


@effect("tool-call-id-repeated")
def _() -> None:
    bridge = echo_with("tool-call-id-repeated")
    ids = [parts_of(bridge.turn([user(f"Question {n}")], tools=[WEATHER], toolMode="required"), n)[-1]["toolCallId"]
           for n in (1, 2)]
    assert ids[0] == ids[1]  # the clean bridge sends echo-call-1, then echo-call-2
    bridge.close()


@effect("history-never-committed")
def _() -> None:
    bridge = echo_with("history-never-committed")
    first = [user("Hello")]
    second = [*first, assistant(answer_text(bridge.turn(first), 1)), user("Two")]
    answer = answer_text(bridge.turn(second), 2)
    assert answer == "session 1 turn 2: 0 committed messages, previous turn committed; new input: user: Two"
    # The clean bridge: "session 1 turn 3: 4 committed messages, previous turn committed; new input: user: Three".
    third = [*second, assistant(answer), user("Three")]
    assert answer_text(bridge.turn(third), 3).startswith("session 1 turn 3: 0 committed messages, previous turn "
                                                         "discarded; new input: user: Hello | assistant:")
    bridge.close()


@effect("cancel-ignored")
def _() -> None:
    bridge = BridgeProcess(*SLOW_ECHO, "--fault", "cancel-ignored")
    request_id = bridge.chat([user(SHORT_QUESTION)])
    messages = [bridge.next_message()]
    bridge.cancel(request_id)
    messages += bridge.until_answer(request_id)
    assert answer_text(messages, request_id).endswith(f"user: {SHORT_QUESTION}")  # the whole answer, after all
    bridge.close()


@effect("dies-on-bad-params")
def _() -> None:
    bridge = echo_with("dies-on-bad-params")
    bridge.request("lm/provideTokenCount", {"modelId": "m", "text": 5})
    assert bridge.next_line() is None  # stdout ends with no answer
    bridge.close(expect_status=101)
    assert any("panicked" in line for line in bridge.stderr)


@effect("non-json-stdout-line")
def _() -> None:
    bridge = echo_with("non-json-stdout-line")
    assert bridge.next_line() == "lmconform bridge ready"
    assert "models" in bridge.until_answer(bridge.request("lm/provideLanguageModelChatInformation"))[-1]["result"]
    bridge.close()


@effect("message-split-across-lines")
def _() -> None:
    bridge = echo_with("message-split-across-lines")
    bridge.chat([user("Hi")])
    lines = [bridge.next_line()]
    while lines[-1] != "}":
        lines.append(bridge.next_line())
    assert len(lines) > 1 and json.loads("\n".join(lines))["method"] == "lm/responsePart"
    bridge.close()


@effect("missing-jsonrpc-version")
def _() -> None:
    bridge = echo_with("missing-jsonrpc-version")
    messages = bridge.turn([user("Hi")])
    assert kinds(messages)[-2:] == ["complete", "result"] and all("jsonrpc" not in m for m in messages)
    bridge.close()


@effect("unknown-part-type")
def _() -> None:
    bridge = echo_with("unknown-part-type")
    messages = bridge.turn([user("Hi")])
    types = [part["type"] for part in parts_of(messages, 1)]
    assert types[0] == "thinking" and set(types[1:]) == {"text"}
    assert answer_text(messages, 1).startswith("session 1 turn 1: ")  # the text itself is whole
    bridge.close()


@effect("result-before-complete")
def _() -> None:
    bridge = echo_with("result-before-complete")
    messages = bridge.turn([user("Hi")])
    assert kinds(messages)[-1] == "result" and kinds([bridge.next_message()]) == ["complete"]
    bridge.close()


@effect("parameters-as-string")
def _() -> None:
    bridge = echo_with("parameters-as-string")
    call = parts_of(bridge.turn([user("Hi in Paris")], tools=[WEATHER], toolMode="required"), 1)[-1]
    assert call["type"] == "tool_call" and isinstance(call["parameters"], str)
    assert json.loads(call["parameters"]) == {"city": "Paris"}
    bridge.close()


@effect("error-as-complete")
def _() -> None:
    bridge = BridgeProcess("--endpoint", f"http://127.0.0.1:{closed_port()}", "--model", "m",
                           "--fault", "error-as-complete")
    assert kinds(bridge.turn([user("Hi")])) == ["complete", "result"]
    bridge.close()


@effect("result-id-as-string")
def _() -> None:
    bridge = echo_with("result-id-as-string")
    bridge.chat([user("Hi")], request_id=7)
    messages = [bridge.next_message()]
    while "method" in messages[-1]:
        messages.append(bridge.next_message())
    assert messages[-1]["id"] == "7" and "result" in messages[-1]
    assert {json.dumps(m["params"]["requestId"]) for m in messages[:-1]} == {"7"}  # notifications untouched
    bridge.close()


@effect("tool-result-refused")
def _() -> None:
    bridge = echo_with("tool-result-refused")
    first = [user("Hi in Paris")]
    call = parts_of(bridge.turn(first, tools=[WEATHER], toolMode="required"), 1)[-1]
    history = [*first, assistant(call), user({"type": "tool_result", "toolCallId": call["toolCallId"], "result": "Sunny"})]
    answer = bridge.turn(history, tools=[WEATHER])
    assert kinds(answer) == ["error"] and answer[0]["error"]["code"] == -32602
    bridge.close()


@effect("unknown-method-invalid-request")
def _() -> None:
    bridge = echo_with("unknown-method-invalid-request")
    answer = bridge.until_answer(bridge.request("lm/provideSomethingNew", {}))
    assert answer[-1]["error"]["code"] == -32600
    bridge.close()


@effect("parse-error-ignored")
def _() -> None:
    bridge = echo_with("parse-error-ignored")
    bridge.send_line("not JSON")
    answer = bridge.until_answer(bridge.request("lm/provideTokenCount", {"modelId": "m", "text": "Hello"}))
    assert kinds(answer) == ["result"]  # no -32700 before it
    bridge.close()


@effect("cancel-unknown-answered")
def _() -> None:
    bridge = echo_with("cancel-unknown-answered")
    bridge.cancel(987654)
    reply = bridge.next_message()
    assert reply["id"] is None and reply["error"]["code"] == -32602
    bridge.close()


@effect("model-info-without-capabilities")
def _() -> None:
    bridge = echo_with("model-info-without-capabilities")
    model = bridge.until_answer(bridge.request("lm/provideLanguageModelChatInformation", {}))[-1]["result"]["models"][0]
    assert "capabilities" not in model and model["id"] == "lmconform-bridge"
    bridge.close()


@effect("token-count-zero")
def _() -> None:
    bridge = echo_with("token-count-zero")
    answer = bridge.until_answer(bridge.request("lm/provideTokenCount", {"modelId": "m", "text": "Hi"}))
    assert answer[-1]["result"] == {"count": 0}  # the clean bridge counts 1
    bridge.close()


def test_every_fault_has_an_effect_test() -> None:
    assert set(FAULT_EFFECTS) == set(FAULTS)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault(fault: str) -> None:
    FAULT_EFFECTS[fault]()
