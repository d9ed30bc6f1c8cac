"""--repeat K: a check passes only if it held for every one of K answers (pass^k), so a defect that shows in
some answers of a non-deterministic server is not lost to a lucky first answer."""

from collections import Counter

import pytest

from lmconform.cases.reader import load_cases
from lmconform.reference import ReferenceServer
from lmconform.reference.app import create_app
from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Outcome


def every_other_chat_answer_empty():
    """The reference app, except that a chat request answered once is answered empty the next time it is sent (the
    empty-response fault), and well the time after: a server whose every second answer to the same request fails."""
    app = create_app()
    sent: Counter[bytes] = Counter()

    async def flaky(scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/v1/chat/completions":
            return await app(scope, receive, send)
        messages, body = [], b""
        while not messages or messages[-1].get("more_body"):
            messages.append(await receive())
            body += messages[-1].get("body", b"")
        sent[body] += 1
        if sent[body] % 2 == 0:
            scope = {**scope, "path": "/faults/empty-response/v1/chat/completions"}
        replay = iter(messages)

        async def received():
            return next(replay, None) or await receive()

        await app(scope, received, send)

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
    pairs = {case.id for case in load_cases("chat") if case.pair}
    played_thrice = {case.id for case in load_cases("chat") if case.plays == 3}
    assert pairs and played_thrice
    # One answer per case, the first: it is fine (unless another case sent the same request before). The keyword
    # matrix's cases are played three times all the same (`"plays": 3`), and the second answer of the three fails.
    once = verdicts(flaky_server, 1)
    thrice = {(v.outcome, v.repetitions) for v in once if v.case_id in played_thrice}
    assert thrice == {(Outcome.FAILED, (2, 3))} and Outcome.OK in {v.outcome for v in once}
    # Two answers per case: every case sees the defect, and says so; a pair (streamed and not) sends its two requests
    # per repetition, and its second repetition sees it in both.
    # A case that sends its request again within a play (chat/parameter-seed, to compare the answers) gets the empty
    # answer on that turn every time, and never on its own request, which is what this check judges.
    sent_again = {case.id for case in load_cases("chat") if case.turns}
    repeated = [v for v in verdicts(flaky_server, 2) if v.case_id not in sent_again]
    assert sent_again and {v.outcome for v in repeated} == {Outcome.FAILED}
    assert {v.repetitions for v in repeated if v.case_id not in played_thrice} == {(1, 2)}
    single = next(v for v in repeated if v.case_id not in pairs | played_thrice)
    assert single.record()["pass_k"] == "1/2" and "held in 1 of 2 repetitions" in single.message


def test_a_deterministic_server_passes_every_repetition():
    with ReferenceServer() as server:
        # The reference profile: its bare-string chat errors are LM Studio's documented form.
        run = run_suite(Target(base_url=server.base_url, profile="reference"), apis=("chat",),
                        settings=RunSettings(repeat=3, fuzz_examples=0))
    assert {v.outcome for v in run.verdicts} == {Outcome.OK}
    assert {v.repetitions for v in run.verdicts} == {(3, 3)}
