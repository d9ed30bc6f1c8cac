"""--repeat K: a check passes only if it held for every one of K answers (pass^k), so a defect that shows in
some answers of a non-deterministic server is not lost to a lucky first answer."""

import itertools

import pytest

from lmconform.cases.reader import load_cases
from lmconform.reference import ReferenceServer
from lmconform.reference.app import create_app
from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Outcome


def every_other_chat_answer_empty():
    """The reference app, except that every second chat request gets the empty-response fault."""
    app = create_app()
    count = itertools.count()

    async def flaky(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/v1/chat/completions" and next(count) % 2:
            scope = {**scope, "path": "/faults/empty-response/v1/chat/completions"}
        await app(scope, receive, send)

    flaky.state = app.state  # the server's shutdown tells held-open streams through it
    return flaky


@pytest.fixture
def flaky_server():
    server = ReferenceServer()
    server.app = every_other_chat_answer_empty()
    with server:
        yield server


def verdicts(server: ReferenceServer, repeat: int) -> list:
    return run_suite(Target(base_url=server.base_url), apis=("chat",), include=["generation.answer.not_empty"],
                     settings=RunSettings(repeat=repeat, fuzz_examples=0)).verdicts


def test_repetition_finds_what_one_lucky_answer_hides(flaky_server):
    # One answer per case: whether a case sees the defect is luck, so some pass and some fail.
    assert {v.outcome for v in verdicts(flaky_server, 1)} == {Outcome.OK, Outcome.FAILED}
    # Two answers per case: every case sees it once, and says so; a pair (streamed and not) sends two requests per
    # repetition, so each of its repetitions sees it.
    repeated = verdicts(flaky_server, 2)
    assert {v.outcome for v in repeated} == {Outcome.FAILED}
    pairs = {case.id for case in load_cases("chat") if case.pair}
    assert pairs and {v.repetitions for v in repeated if v.case_id in pairs} == {(0, 2)}
    single = [v for v in repeated if v.case_id not in pairs]
    assert {v.repetitions for v in single} == {(1, 2)}
    assert single[0].record()["pass_k"] == "1/2" and "held in 1 of 2 repetitions" in single[0].message


def test_a_deterministic_server_passes_every_repetition():
    with ReferenceServer() as server:
        # The reference profile: its bare-string chat errors are LM Studio's documented form.
        run = run_suite(Target(base_url=server.base_url, profile="reference"), apis=("chat",),
                        settings=RunSettings(repeat=3, fuzz_examples=0))
    assert {v.outcome for v in run.verdicts} == {Outcome.OK}
    assert {v.repetitions for v in run.verdicts} == {(3, 3)}
