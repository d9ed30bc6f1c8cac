"""Generated answers: the reference server's clean answer to a request in a legal but unusual wire form.

Property one: lmconform raises no false alarm. Every generated answer, fetched straight from the reference server,
passes every wire and semantic check; a client check fails exactly where the server says a real client reads the
form wrongly, and then the failure is the real client's own (the openai SDK replayed over the captured bytes, and
openai-node's decoder as Void runs it). A check that failed a legal stream would be a defect of the check.

`make fuzz-self` runs the property over many more answers (LMCONFORM_FUZZ_SELF answers per API).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import budget
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from in_process import InProcess

from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import evaluate
from lmconform.checks.observed import Observed, generation_of
from lmconform.fuzz import streams
from lmconform.reference import ReferenceServer, create_app, raw
from lmconform.reference.raw import DRIP_PAUSE_S
from lmconform.reference.streams import FEATURES, FORM_HEADER, SHOWS_HEADER, TROUBLES_HEADER, Form, parse_form
from lmconform.target import Target
from lmconform.vocabulary import Outcome
from lmconform.wire.http import send

# 250 answers of each API in `make test` (25 in `make check`), drawn the same way every run.
PER_API = int(os.environ.get("LMCONFORM_FUZZ_SELF", budget.examples(250)))
TARGET = Target(base_url="http://reference.invalid", profile="reference")
CHECKS = [check for check in REGISTRY.values() if check.requires <= TARGET.profile_requirements]
# The checks of each client the server's troubles header names: its replay, and a wire check that exists because
# that client misreads a legal form (the openai SDK and a block without data once ids are set).
CLIENT_CHECKS = {"openai-python": ("client.openai_python.", "sse.framing.no_empty_event_after_id"),
                 "openai-node": ("client.void.",)}
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
SOURCES = {api: next(case for case in load_cases(api) if case.source == streams.SOURCE) for api in PATHS}


@pytest.fixture(scope="module")
def app():
    driver = InProcess()
    yield driver
    driver.close()


def verdicts_on(observed: Observed) -> dict[str, object]:
    found = {}
    for check in CHECKS:
        if check.applies(observed.case):
            verdict = evaluate(check, observed)
            if verdict is not None:
                found[check.id] = verdict
    return found


def judge_example(app: InProcess, example: streams.Example):
    case = streams.as_case(SOURCES[example.api], example, 0)
    exchange = app.send(PATHS[example.api], case.body_for("lmconform-reference"))
    return exchange, verdicts_on(Observed(case, TARGET, exchange))


def assert_no_false_alarm(exchange, verdicts) -> None:
    assert exchange.status == 200, exchange.body_excerpt()
    form = exchange.headers[FORM_HEADER.lower()]
    troubled = {client for client in exchange.headers[TROUBLES_HEADER.lower()].split(",") if client}
    for check_id, verdict in verdicts.items():
        client = next((name for name, prefix in CLIENT_CHECKS.items() if check_id.startswith(prefix)), None)
        if client is None or client not in troubled:
            # INFO is worth knowing (arguments in one delta, say), never an alarm.
            assert verdict.outcome in (Outcome.OK, Outcome.INFO), \
                f"form {form}: a false alarm of {check_id}\n{verdict.message}"
    for client in troubled:
        failed = {check_id for check_id, verdict in verdicts.items()
                  if check_id.startswith(CLIENT_CHECKS[client]) and verdict.outcome is Outcome.FAILED}
        assert failed, f"form {form}: the server says {client} reads it wrongly, but its checks pass"


SETTINGS = settings(max_examples=PER_API, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(example=streams.answers("chat"))
def test_no_check_raises_a_false_alarm_on_a_generated_chat_answer(app, example):
    assert_no_false_alarm(*judge_example(app, example))


@SETTINGS
@given(example=streams.answers("responses"))
def test_no_check_raises_a_false_alarm_on_a_generated_responses_answer(app, example):
    assert_no_false_alarm(*judge_example(app, example))


def example_in(api: str, features: set[str], seed: int = 7, calls: int = 1, think: bool = True) -> streams.Example:
    return streams.Example(api, "Grüße 😀 東京", "Zürich", think, calls, api == "chat", Form(seed, frozenset(features)))


def test_every_form_of_a_request_carries_the_same_generation(app):
    def seen(example):
        exchange, _ = judge_example(app, example)
        generation = generation_of(example.api, exchange)
        end = generation.end
        return (generation.text(), generation.text("reasoning"),
                [(call.name, call.arguments_text) for call in generation.tool_calls()], end.finish_reason, end.usage)

    for api in PATHS:
        plain = seen(example_in(api, set()))
        assert plain[1].startswith("Thinking about:") and plain[2] and "lmconform-stream" not in repr(plain)
        for name in streams.features_of(api):
            assert seen(example_in(api, {name})) == plain, name
        everything = set(streams.features_of(api)) - {"cr", "mixed-line-ends"}
        assert seen(example_in(api, everything)) == plain


def test_keep_alives_after_id_lines_break_the_real_openai_sdk_and_only_the_wire_check_naming_that(app):
    # openai-python keeps the last event id after dispatching, so a blank line after a keep-alive comment is
    # dispatched as an event with empty data, which it then fails to parse (coverage-facts F16, openai 3.54).
    exchange, verdicts = judge_example(app, example_in("chat", {"ids", "keep-alives"}, seed=3))
    assert "openai-python" in exchange.headers[TROUBLES_HEADER.lower()]
    sdk = verdicts["client.openai_python.stream_helper"]
    assert sdk.outcome is Outcome.FAILED and "JSONDecodeError" in sdk.failures[0].actual
    wire = {check_id: verdict.outcome for check_id, verdict in verdicts.items() if not check_id.startswith("client.")}
    assert wire.pop("sse.framing.no_empty_event_after_id") is Outcome.FAILED
    assert wire and set(wire.values()) == {Outcome.OK}


def test_event_lines_on_a_chat_stream_break_void_through_openai_node_and_no_wire_check(app):
    exchange, verdicts = judge_example(app, example_in("chat", {"event-lines"}))
    assert b"event: message\n" in exchange.body
    assert exchange.headers[TROUBLES_HEADER.lower()] == "openai-node"
    assert verdicts["client.void.no_error"].outcome is Outcome.FAILED
    assert verdicts["client.openai_python.stream_helper"].outcome is Outcome.OK
    assert {verdict.outcome for check_id, verdict in verdicts.items() if not check_id.startswith("client.")} == {Outcome.OK}


def test_split_writes_cut_every_multi_byte_character_and_crlf_pairs_as_the_reads_show(app):
    exchange, _ = judge_example(app, example_in("chat", {"crlf", "split-utf8", "split-crlf", "one-byte-writes"}))
    reads = [chunk.data for chunk in exchange.chunks]
    undecodable = [read for read in reads if not _decodes(read)]
    assert undecodable, "no read ends inside a character"
    assert any(read.endswith(b"\r") and following.startswith(b"\n") for read, following in zip(reads, reads[1:]))
    assert sum(len(read) == 1 for read in reads) >= 8
    assert "4-byte" in exchange.headers[SHOWS_HEADER.lower()] and "CRLF pair" in exchange.headers[SHOWS_HEADER.lower()]


@pytest.mark.parametrize("stream_pause, drip_pauses", [(None, [DRIP_PAUSE_S] * 3), (0, [0.0] * 3)])
def test_a_drip_writes_its_first_bytes_one_by_one_pausing_unless_the_server_is_told_not_to(monkeypatch, stream_pause,
                                                                                           drip_pauses):
    """The stream fuzz's upstream pauses nowhere (its readers take each chunk apart whatever the timing); a server
    with the default pause drips as the feature says."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(raw, "asyncio", SimpleNamespace(sleep=sleep))
    driver = InProcess(create_app() if stream_pause is None else create_app(stream_pause=stream_pause))
    try:
        exchange, _ = judge_example(driver, example_in("chat", {"drip"}))
    finally:
        driver.close()
    assert [len(chunk.data) for chunk in exchange.chunks[:3]] == [1, 1, 1] and len(exchange.chunks[3].data) > 1
    assert slept == drip_pauses


def test_a_close_delimited_body_keeps_its_write_features_only_where_the_server_pauses(server):
    """A close-delimited body has no chunks: only the pauses keep its writes apart. Without them the server sends
    it in one write and its form header leaves the write features out, so that playing the form again (as a
    shrink does) takes effect alike whatever the timing."""
    features = {"split-utf8", "split-crlf", "one-byte-writes", "crlf", "drip", "close-delimited"}
    case = streams.as_case(SOURCES["chat"], example_in("chat", features), 0)
    with ReferenceServer(stream_pause=0) as unpaused:
        answers = {pause: send(Target(base_url=running.base_url), "POST", PATHS["chat"], case.body_for("m"))
                   for pause, running in (("paused", server), ("unpaused", unpaused))}
    named = {pause: parse_form(answer.headers[FORM_HEADER.lower()]).features for pause, answer in answers.items()}
    assert named["paused"] == features
    assert named["unpaused"] == {"crlf", "close-delimited"}
    assert "split across writes" not in answers["unpaused"].headers[SHOWS_HEADER.lower()]
    texts = {pause: generation_of("chat", answer).text() for pause, answer in answers.items()}
    assert texts["unpaused"] == texts["paused"] and not answers["unpaused"].sse.issues


def _decodes(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def test_a_form_is_named_by_a_seed_alone_by_its_features_or_as_plain():
    assert parse_form("12:crlf,ids") == Form(12, frozenset({"crlf", "ids"}))
    assert parse_form("12:plain") == Form(12, frozenset())
    assert parse_form("12") == Form.from_seed(12) and str(parse_form(str(parse_form("12")))) == str(parse_form("12"))
    assert any(Form.from_seed(seed).features for seed in range(3))
    for bad, reason in (("x", "a stream form is SEED"), ("1:nope", "no stream feature is called nope"),
                        ("1:crlf,cr", "at most one of")):
        with pytest.raises(ValueError, match=reason):
            parse_form(bad)
    assert {feature.group for feature in FEATURES.values()} == {None, "line-ends"}


def test_over_tcp_the_path_the_tag_and_their_refusals(server):
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Hi in Łódź"}]}
    target = Target(base_url=server.base_url)
    by_path = send(target, "POST", "/streams/5:crlf,split-utf8/v1/chat/completions", body)
    assert by_path.status == 200 and by_path.headers[FORM_HEADER.lower()] == "5:crlf,split-utf8"
    assert b"\r\n\r\n" in by_path.body and not by_path.sse.issues
    tagged = {**body, "messages": [{"role": "user", "content": "Hi in Łódź lmconform-stream=5:crlf,split-utf8"}]}
    by_tag = send(target, "POST", "/v1/chat/completions", tagged)
    assert by_tag.headers[FORM_HEADER.lower()] == "5:crlf,split-utf8"
    assert [e.data for e in by_tag.sse.events][1:] and "lmconform-stream" not in by_tag.body.decode()
    assert FORM_HEADER.lower() not in send(target, "POST", "/faults/no-done/v1/chat/completions", tagged).headers
    missing = send(target, "POST", "/streams/5:nope/v1/chat/completions", body)
    assert missing.status == 404 and "no stream feature is called nope" in missing.body.decode()
    refused = httpx.post(server.base_url + "/v1/responses",
                         json={"input": "lmconform-stream=5:nope", "stream": True}).json()
    assert "no stream feature is called nope" in refused["error"]["message"]


def test_over_tcp_the_reads_split_where_the_writes_do_and_no_check_raises_an_alarm():
    # A pause after each write that splits a character: the capture's reads end inside characters too.
    with ReferenceServer(stream_pause=0.01) as running:
        target = Target(base_url=running.base_url, profile="reference")
        for api in PATHS:
            example = example_in(api, {"split-utf8", "crlf", "comments", "ids"}, calls=2)
            case = streams.as_case(SOURCES[api], example, 0)
            exchange = send(target, "POST", PATHS[api], case.body_for("m"))
            assert any(not _decodes(chunk.data) for chunk in exchange.chunks)
            verdicts = verdicts_on(Observed(case, target, exchange))
            assert {verdict.outcome for verdict in verdicts.values()} == {Outcome.OK}, api
