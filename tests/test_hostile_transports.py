"""Hostile transports: the reference server's faults of the transport under every answer
(lmconform/reference/faults/transport.py) and the older ones of a stream's bytes (a stall, a gigabyte of padding,
invalid UTF-8). Each ends every case it touches with a verdict inside the case's time limit, saying what happened in
a user's words, with nothing left running; the legal forms among them (a drip, gzip, a close-delimited body) raise
no finding.

The runs of every hostile fault below (`test_every_hostile_fault_ends_each_case_with_a_verdict`) took 20 s in all on two busy
cores when it was written, well under a minute: its bound is the limits it passes (a 1 s read timeout, a 10 s deadline
per answer, a 64 KiB body cap), not a clock.
"""

from __future__ import annotations

import gzip
import os
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.checks import REGISTRY
from lmconform.reference import FAULTS, ReferenceServer
from lmconform.reference.faults.transport import BAD_GATEWAY_PAGE
from lmconform.reference.raw import DRIP_BYTES, LENGTH_LIE, RESET_AFTER_EVENTS
from lmconform.run import RunPlan
from lmconform.target import Target
from lmconform.vocabulary import FINDINGS, Level, Outcome
from lmconform.wire.http import send

pytestmark = pytest.mark.waits

TRANSPORT_FAULTS = [name for name, fault in FAULTS.items() if fault.module == "lmconform.reference.faults.transport"]
HOSTILE = [*TRANSPORT_FAULTS, "stall", "body-too-large", "invalid-utf8"]
CASES = ("chat/text-stream", "chat/non-stream-text", "responses/text-stream", "messages/text-stream")
STREAM = {"model": "m", "messages": [{"role": "user", "content": "Say hello to the lighthouse"}], "stream": True}
# The longest an answer may take, whatever arrives: with the read timeout and the body cap, what bounds a case's time
# (a case sends its request, and a pair or a turn one more), so that every fault ends well inside a minute.
ANSWER_DEADLINE_S = 10
# Exception names in a message are a traceback's words, not a user's.
PROGRAMMER_WORDS = ("Error:", "Exception", "Traceback")


def played(base_url: str, fault: str) -> dict[str, list]:
    """The verdicts of CASES against the server with `fault`, by case, with a short read timeout and a small cap."""
    target = Target(base_url=f"{base_url}/faults/{fault}", read_timeout=1, deadline=ANSWER_DEADLINE_S,
                    max_body_bytes=1 << 16, profile="reference")
    plan = RunPlan(target, probe=False)
    run = plan.start()
    verdicts: dict[str, list] = {case_id: [] for case_id in CASES}
    try:
        for api in {case_id.split("/")[0] for case_id in CASES}:
            for case, check in plan.pairs(api):
                if case.id in verdicts:
                    verdict = run.judge(case, check)
                    if verdict is not None:
                        verdicts[case.id].append(verdict)
    finally:
        run.close()
    return verdicts


def _children() -> set[int]:
    """The processes this one started that still have a /proc entry (running, or a zombie not waited for)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"PPid:\t{os.getpid()}" in status.read_text():
                found.add(int(status.parent.name))
        except OSError:
            continue
    return found


def _left_running(threads: set[threading.Thread], children: set[int]) -> list[str]:
    """What was started since `threads` and `children` were taken and is still running, once what is ending has had
    a generous while to end (a loaded runner is slow to schedule a thread's last steps)."""
    deadline = time.monotonic() + 30
    while True:
        left = [thread.name for thread in threading.enumerate() if thread not in threads and thread.is_alive()]
        left += [f"process {pid}" for pid in _children() - children]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@pytest.mark.parametrize("fault", HOSTILE)
def test_every_hostile_fault_ends_each_case_with_a_verdict(fault):
    # A server of its own, stopped at the end: a stall or a gigabyte of padding goes on until the server stops, and
    # must end with it, leaving no thread or process of the run behind.
    threads, children = set(threading.enumerate()), _children()
    with ReferenceServer() as own:
        verdicts = played(own.base_url, fault)
        assert httpx.get(f"{own.base_url}/v1/models", timeout=30).status_code == 200, "the server survives it"
    assert not _left_running(threads, children), f"left running after {fault}: {_left_running(threads, children)}"
    for case_id, judged in verdicts.items():
        assert judged, f"{case_id} got no verdict under {fault}"
        outcomes = {verdict.outcome for verdict in judged}
        for verdict in judged:
            assert not any(word in verdict.detail for word in PROGRAMMER_WORDS), verdict.message
            assert "the check crashed" not in verdict.detail
        if fault == "stall" and case_id == "chat/text-stream":  # the one fault with nothing to judge but its timeout
            assert outcomes == {Outcome.ERROR} and "no bytes for 1 s (read timeout)" in judged[0].detail
        elif FAULTS[fault].variant:
            assert {verdict.check.level for verdict in judged if verdict.outcome in FINDINGS} <= {Level.INFO}, case_id
            assert Outcome.ERROR not in outcomes
        else:
            assert outcomes - {Outcome.ERROR}, f"{case_id} under {fault}: only ERROR, no verdict"


def finding(base_url: str, fault: str, case_id: str, check_id: str) -> str:
    (verdict,) = [verdict for verdict in played(base_url, fault)[case_id] if verdict.check.id == check_id]
    assert verdict.outcome is Outcome.FAILED
    return verdict.message


def test_a_reset_says_after_how_many_events(server):
    message = finding(server.base_url, "connection-reset", "chat/text-stream", "http.body.complete")
    assert f"the server reset the connection after {RESET_AFTER_EVENTS} events (" in message


def test_a_lying_length_says_how_many_bytes_came_of_how_many(server):
    message = finding(server.base_url, "content-length-long", "chat/non-stream-text", "http.body.complete")
    assert "the server closed the connection after" in message and "bytes its Content-Length announced" in message


@pytest.mark.parametrize(("case_id", "check_id", "where"), [
    ("chat/text-stream", "sse.framing.ends_with_done", "inside an event"),
    ("chat/non-stream-text", "generation.answer.not_empty", "inside its JSON document")])
def test_a_short_length_says_the_body_stops_where_it_said(server, case_id, check_id, where):
    # HTTP ends a body at its Content-Length: a client sees no error, only an answer that stops short.
    message = finding(server.base_url, "content-length-short", case_id, check_id)
    assert f"bytes its Content-Length announced and ends {where}: a Content-Length shorter than the answer" in message


def test_an_html_error_page_is_named_as_one(server):
    message = finding(server.base_url, "bad-gateway-html", "chat/text-stream", "http.status.success_for_valid_request")
    assert "HTTP 502 with an HTML page (text/html)" in message


def test_an_answer_in_one_piece_within_the_read_timeout_is_whole_however_short_the_deadline():
    """The deadline bounds a stream that never ends; a user who waits `--read-timeout` for a first byte waits as long
    for a non-streamed answer, which arrives in one piece: a slow model's long answer is not cut as still arriving."""
    body = b'{"object": "list", "data": []}'
    with socket.create_server(("127.0.0.1", 0)) as listener:
        def answer_late() -> None:
            connection, _ = listener.accept()
            with connection:
                connection.recv(65536)
                time.sleep(0.5)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                                   b"Connection: close\r\n\r\n%s" % (len(body), body))
        thread = threading.Thread(target=answer_late)
        thread.start()
        target = Target(base_url=f"http://127.0.0.1:{listener.getsockname()[1]}", read_timeout=60, deadline=0.1)
        exchange = send(target, "GET", "/v1/models")
        thread.join()
    assert exchange.error is None and exchange.body == body


def test_the_body_check_is_proven_by_the_reset_and_the_lie():
    assert set(REGISTRY["http.body.complete"].proven_by) == {"connection-reset", "content-length-long"}


# --- each fault changes what it names ------------------------------------------------------------------------------

def raw_exchange(server, fault: str, body: dict = STREAM, accept: str = "") -> bytes:
    """The whole answer as the socket gave it, until the server ended the connection (a reset ends it too)."""
    request = httpx.Request("POST", f"{server.base_url}/faults/{fault}/v1/chat/completions", json=body)
    head = f"POST {request.url.raw_path.decode()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" \
           f"Content-Length: {len(request.content)}\r\n{accept}Connection: close\r\n\r\n"
    received = b""
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(head.encode() + request.content)
        try:
            while data := sock.recv(65536):
                received += data
        except ConnectionResetError:
            received += b"<RST>"
    return received


FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("connection-reset")
def _(server) -> None:
    received = raw_exchange(server, "connection-reset")
    assert received.endswith(b"<RST>") and b"data: [DONE]" not in received
    assert received.count(b"\n\n") == RESET_AFTER_EVENTS


@effect("bad-gateway-html")
def _(server) -> None:
    head, _, body = raw_exchange(server, "bad-gateway-html").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 502") and b"content-type: text/html" in head.lower()
    assert body.decode() == BAD_GATEWAY_PAGE


def _length_and_body(received: bytes) -> tuple[int, bytes]:
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    return length, body


@effect("content-length-short")
def _(server) -> None:
    length, body = _length_and_body(raw_exchange(server, "content-length-short", {**STREAM, "stream": False}))
    assert length == len(body) - LENGTH_LIE


@effect("content-length-long")
def _(server) -> None:
    length, body = _length_and_body(raw_exchange(server, "content-length-long"))
    assert length == len(body) + LENGTH_LIE and body.endswith(b"data: [DONE]\n\n")


@effect("drip")
def _(server) -> None:
    with httpx.stream("POST", f"{server.base_url}/faults/drip/v1/chat/completions", json=STREAM, timeout=30) as answer:
        reads = list(answer.iter_raw())
    assert [len(data) for data in reads[:DRIP_BYTES]] == [1] * DRIP_BYTES
    assert b"".join(reads).endswith(b"data: [DONE]\n\n")


@effect("gzip-stream")
def _(server) -> None:
    head, _, body = raw_exchange(server, "gzip-stream", accept="Accept-Encoding: gzip\r\n").partition(b"\r\n\r\n")
    assert b"content-encoding: gzip" in head.lower()
    chunks, decoded = body, b""
    while chunks and not chunks.startswith(b"0\r\n"):  # chunked: each size line, then its bytes
        size, _, rest = chunks.partition(b"\r\n")
        decoded, chunks = decoded + rest[:int(size, 16)], rest[int(size, 16) + 2:]
    assert gzip.decompress(decoded).endswith(b"data: [DONE]\n\n")
    plain = raw_exchange(server, "gzip-stream")  # a client that does not accept gzip gets none
    assert b"content-encoding" not in plain.lower()


@effect("close-delimited")
def _(server) -> None:
    head, _, body = raw_exchange(server, "close-delimited").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") and b"content-length" not in head.lower()
    assert b"transfer-encoding" not in head.lower() and body.endswith(b"data: [DONE]\n\n")


@effect("model-loading-once")
def _(server) -> None:
    # A request it has not seen is answered 503 `Loading model`; the same request again, normally; another, 503 first.
    url = f"{server.base_url}/faults/model-loading-once/v1/chat/completions"
    first, again = (httpx.post(url, json={**STREAM, "stream": False}, timeout=30) for _ in range(2))
    assert first.status_code == 503 and first.json()["error"]["message"] == "Loading model"
    assert again.status_code == 200 and again.json()["object"] == "chat.completion"
    other = {**STREAM, "stream": False, "messages": [{"role": "user", "content": "another request"}]}
    assert httpx.post(url, json=other, timeout=30).status_code == 503


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(server, fault):
    FAULT_EFFECTS[fault](server)
