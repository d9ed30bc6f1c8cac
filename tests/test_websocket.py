"""The Responses API's WebSocket mode on the reference server, and lmconform's client of it: each `response.create`
answered with the SSE stream's events as JSON text frames, sequential responses on one socket, a `store: false`
response continued on its socket and gone after a reconnect, `previous_response_not_found` as an error event, a
failed continuation evicting the response it named; each fault of the mode changes what it names, the variant that
does not offer it refuses the upgrade as a route it does not have, and the checks judge a refusal "not offered", a
200 or an answer that is no handshake a failure, a silence a timeout."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.run import run_suite
from lmconform.run.exchanges import exchange_text
from lmconform.settings import RunSettings
from lmconform.snapshots.shape import shape_of
from lmconform.target import Target
from lmconform.vocabulary import Outcome
from lmconform.wire.websocket import WebSocketExchange, WebSocketRequest, WebSocketSession

LONG = "Remember the word 'saffron': I will ask you for it later, after a short pause."
CASES = ("responses/websocket-*",)


def create(**fields: object) -> dict:
    return {"type": "response.create", "model": "m", **fields}


def session(client: httpx.Client, fault: str | None = None, read_timeout: float = 30) -> WebSocketSession:
    path = f"/faults/{fault}/v1/responses" if fault else "/v1/responses"
    return WebSocketSession(Target(base_url=str(client.base_url).rstrip("/"), read_timeout=read_timeout), path)


def played(client: httpx.Client, messages: list[tuple[dict, bool]], fault: str | None = None) -> list[WebSocketExchange]:
    """Each message (and whether it is sent on a new socket) with its answer."""
    sockets = session(client, fault)
    try:
        return [sockets.send(message, reconnect=reconnect) for message, reconnect in messages]
    finally:
        sockets.close()


def test_each_message_is_answered_with_the_sse_streams_events_in_turn_on_one_socket(client):
    first, second = played(client, [(create(input="Count from 1 to 3."), False), (create(input="Name a colour."), False)])
    streamed = [json.loads(line[5:]) for line in client.post(
        "/v1/responses", json={"model": "m", "input": "Count from 1 to 3.", "stream": True}).text.splitlines()
        if line.startswith("data:")]
    assert first.types == [event["type"] for event in streamed]
    assert first.types[0] == "response.created" and first.types[-1] == "response.completed"
    assert [event["sequence_number"] for event in first.events] == list(range(len(first.events)))
    assert second.succeeded and second.response["id"] != first.response["id"]
    assert first.request.connection == second.request.connection == 1


def test_a_store_false_response_is_kept_by_its_socket_only(client):
    sockets = session(client)
    try:
        kept = sockets.send(create(input=LONG, store=False))
        chained = sockets.send(create(input="Which word?", previous_response_id=kept.response["id"], store=False))
        after_reconnect = sockets.send(create(input="Which word?", previous_response_id=kept.response["id"]),
                                       reconnect=True)
        recovered = sockets.send(create(input=[{"role": "user", "content": LONG}, {"role": "user", "content": "Which?"}]))
    finally:
        sockets.close()
    assert client.get(f"/v1/responses/{kept.response['id']}").status_code == 404  # never stored
    assert chained.succeeded and chained.response["usage"]["input_tokens"] > kept.response["usage"]["input_tokens"]
    assert after_reconnect.request.connection == 2
    assert after_reconnect.error_event["code"] == "previous_response_not_found"
    assert recovered.succeeded


def test_an_unknown_id_is_an_error_event_and_a_failed_continuation_evicts_what_it_named(client):
    unknown, after = played(client, [(create(input="Hi.", previous_response_id="resp_never"), False),
                                     (create(input="Bye."), False)])
    assert unknown.events == [{"type": "error", "status": 400, "error": {
        "message": "Previous response with id 'resp_never' not found.", "type": "invalid_request_error",
        "param": "previous_response_id", "code": "previous_response_not_found"}}]
    assert after.succeeded
    sockets = session(client)
    try:
        kept = sockets.send(create(input=LONG, store=False))
        failed = sockets.send(create(input=42, previous_response_id=kept.response["id"], store=False))
        again = sockets.send(create(input="Which word?", previous_response_id=kept.response["id"], store=False))
        stored = sockets.send(create(input=LONG))
        sockets.send(create(input=42, previous_response_id=stored.response["id"]))
        from_store = sockets.send(create(input="Which word?", previous_response_id=stored.response["id"]))
    finally:
        sockets.close()
    assert failed.error_event["param"] == "input"
    assert again.error_event["code"] == "previous_response_not_found"
    assert from_store.succeeded  # a stored response is still found in the server's store


def test_a_message_that_is_not_response_create_is_an_error_event(client):
    (answer,) = played(client, [({"type": "response.cancel"}, False)])
    assert answer.error_event["code"] == "unknown_event_type" and answer.upgraded


FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("responses-websocket-not-offered")
def _(client: httpx.Client) -> None:
    (refused,) = played(client, [(create(input="Hi."), False)], "responses-websocket-not-offered")
    assert refused.status == 404 and refused.refused and not refused.frames
    (lmstudio,) = played(client, [(create(input="Hi."), False)], "responses-websocket-not-offered,unknown-route-200")
    assert lmstudio.status == 200 and lmstudio.refused
    assert json.loads(lmstudio.refusal) == {"error": "Unexpected endpoint or method. (GET /v1/responses)"}
    assert client.post("/faults/responses-websocket-not-offered/v1/responses", json={"input": "Hi."}).status_code == 200


@effect("websocket-upgrade-200")
def _(client: httpx.Client) -> None:
    (answer,) = played(client, [(create(input="Hi."), False)], "websocket-upgrade-200")
    assert answer.status == 200 and not answer.refused and not answer.upgraded


@effect("websocket-events-out-of-order")
def _(client: httpx.Client) -> None:
    (answer,) = played(client, [(create(input="Say hello."), False)], "websocket-events-out-of-order")
    assert answer.types[:2] == ["response.created", "response.completed"] and len(answer.types) == 2
    (clean,) = played(client, [(create(input="Say hello."), False)])
    assert clean.types[-1] == "response.completed" and len(clean.types) > 2


@effect("websocket-store-false-forgotten")
def _(client: httpx.Client) -> None:
    sockets = session(client, "websocket-store-false-forgotten")
    try:
        kept = sockets.send(create(input=LONG, store=False))
        chained = sockets.send(create(input="Which?", previous_response_id=kept.response["id"], store=False))
        stored = sockets.send(create(input=LONG))
        from_store = sockets.send(create(input="Which?", previous_response_id=stored.response["id"]))
    finally:
        sockets.close()
    assert chained.error_event["code"] == "previous_response_not_found" and from_store.succeeded


@effect("websocket-error-as-close")
def _(client: httpx.Client) -> None:
    unknown, after = played(client, [(create(input="Hi.", previous_response_id="resp_never"), False),
                                     (create(input="Bye."), False)], "websocket-error-as-close")
    assert unknown.closed == "1011" and not unknown.frames and unknown.error_kind == "broken"
    assert after.error == "not sent: the server had closed the socket"


@effect("websocket-closed-mid-response")
def _(client: httpx.Client) -> None:
    (cut,) = played(client, [(create(input="Say hello."), False)], "websocket-closed-mid-response")
    assert cut.types[0] == "response.created" and "response.completed" not in cut.types and cut.closed == "1011"


@effect("websocket-failed-continuation-kept")
def _(client: httpx.Client) -> None:
    sockets = session(client, "websocket-failed-continuation-kept")
    try:
        kept = sockets.send(create(input=LONG, store=False))
        sockets.send(create(input=42, previous_response_id=kept.response["id"], store=False))
        again = sockets.send(create(input="Which?", previous_response_id=kept.response["id"], store=False))
    finally:
        sockets.close()
    assert again.succeeded


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


def verdicts(base_url: str, read_timeout: float = 30, cases: tuple[str, ...] = CASES) -> dict[tuple[str, str], Outcome]:
    run = run_suite(Target(base_url=base_url, read_timeout=read_timeout), apis=("responses",), cases=cases,
                    settings=RunSettings(fuzz_examples=0))
    return {(verdict.case_id, verdict.check.id): verdict.outcome for verdict in run.verdicts}


def test_the_clean_server_passes_and_a_refused_upgrade_is_not_offered(server):
    clean = verdicts(server.base_url)
    assert len({case for case, _ in clean}) == 7 and set(clean.values()) == {Outcome.OK}
    for fault in ("responses-websocket-not-offered", "responses-websocket-not-offered,unknown-route-200"):
        assert set(verdicts(f"{server.base_url}/faults/{fault}").values()) == {Outcome.UNSUPPORTED}


@pytest.mark.parametrize("fault, check", [
    ("websocket-upgrade-200", "upgrade_answered"), ("websocket-events-out-of-order", "events_in_order"),
    ("websocket-closed-mid-response", "events_in_order"), ("websocket-store-false-forgotten", "continuation_kept"),
    ("chain-ignored", "continuation_kept"), ("websocket-error-as-close", "unknown_previous_is_error"),
    ("unknown-previous-200", "unknown_previous_is_error"), ("websocket-error-as-close", "store_false_recovery"),
    ("websocket-failed-continuation-kept", "failed_continuation_evicts"),
    ("compaction-input-500", "compaction_new_chain_used"), ("compaction-input-forgotten", "compaction_new_chain_used")])
def test_each_fault_fails_the_check_it_breaks(server, fault, check):
    found = verdicts(f"{server.base_url}/faults/{fault}")
    judged = {outcome for (_, check_id), outcome in found.items() if check_id == f"responses.websocket.{check}"}
    assert judged & {Outcome.FAILED, Outcome.NON_STRICT}


NEW_CHAIN = ("responses/websocket-compaction-new-chain",)
USED = ("responses/websocket-compaction-new-chain", "responses.websocket.compaction_new_chain_used")


def test_a_compaction_refused_naming_it_is_a_limit_and_a_server_without_compact_leaves_nothing_to_send(server):
    # compaction-input-refused: the item refused 400 at input.0.type, an error event on the socket, the socket open.
    refused = verdicts(f"{server.base_url}/faults/compaction-input-refused", cases=NEW_CHAIN)
    assert set(refused.values()) == {Outcome.OK}
    # responses-compaction-not-offered: POST /v1/responses/compact is a 404, the socket itself answers.
    not_offered = verdicts(f"{server.base_url}/faults/responses-compaction-not-offered", cases=NEW_CHAIN)
    assert not_offered.pop(USED) is Outcome.UNSUPPORTED and set(not_offered.values()) == {Outcome.OK}


def test_an_answer_that_never_ends_is_a_finding_once_the_read_timeout_passes(server):
    # no-response-completed: the stream's terminal event is left out; over a socket nothing ends the answer.
    found = verdicts(f"{server.base_url}/faults/no-response-completed", 1, ("responses/websocket-response",))
    assert found[("responses/websocket-response", "responses.websocket.events_in_order")] is Outcome.FAILED


@pytest.fixture
def listener() -> Iterator[tuple[socket.socket, str]]:
    """A port that accepts connections and answers what the test writes (or nothing)."""
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


def _answer_once(sock: socket.socket, reply: bytes | None, done: threading.Event) -> None:
    connection, _ = sock.accept()
    with connection:
        connection.recv(4096)
        if reply is not None:
            connection.sendall(reply)  # and closes
            return
        done.wait(10)


@pytest.mark.parametrize("reply, expected", [(b"HELLO\r\n\r\n", "the upgrade was not answered with a WebSocket handshake"),
                                             (None, "the upgrade was not answered in 1 s")])
def test_an_upgrade_answered_with_garbage_fails_and_a_silent_one_times_out(listener, reply, expected):
    sock, base_url = listener
    done = threading.Event()
    thread = threading.Thread(target=_answer_once, args=(sock, reply, done), daemon=True)
    thread.start()
    try:
        exchange = WebSocketSession(Target(base_url=base_url, read_timeout=1), "/v1/responses").send(create(input="x"))
    finally:
        done.set()
        thread.join()
    assert exchange.error.startswith(expected) and not exchange.upgraded and not exchange.refused


def test_a_socket_exchange_is_kept_in_the_record_and_shaped_whatever_the_upgrade_got():
    """What a server that is no reference server answers (LiteLLM closed the socket 1011 after the upgrade; llama-server
    refused it 404) reaches the record's exchange text and the shape snapshots, not an assertion."""
    request = WebSocketRequest(url="ws://127.0.0.1:1/v1/responses", body={"type": "response.create", "input": "Hi"})
    closed = WebSocketExchange(request=request, status=101, closed="1011 Internal server error: no",
                               frames=['{"type": "response.created", "response": {"id": "resp_1"}}'])
    refused = WebSocketExchange(request=request, status=404, refusal=b'{"detail": "Not Found"}')
    text = exchange_text(closed, ())
    assert text.startswith("WebSocket ws://127.0.0.1:1/v1/responses (socket 1)") and '"response.create"' in text
    assert text.endswith('{"type": "response.created", "response": {"id": "resp_1"}}\n[closed: 1011 Internal server '
                         'error: no]')
    assert "upgrade answered HTTP 404\n{\"detail\": \"Not Found\"}" in exchange_text(refused, ())
    assert shape_of(closed, "responses") == {"closed": "1011", "upgrade": 101, "events": [
        {"type": "response.created", "response": {"id": "string"}}]}
    assert shape_of(refused, "responses") == {"body": {"detail": "string"}, "events": [], "upgrade": 404}
