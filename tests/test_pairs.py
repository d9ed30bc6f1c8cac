"""A request answered more than once: a pair (`"pair": "stream"`) is judged on two requests, so its failure text
replays both (the request as the case sends it and in its other form, each a `Reproduce:` line, and the curl of the
record holds both), and each of its answers is held to the rules of one answer; a response read back by id is judged
only where the server reads responses back at all."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import evaluate
from lmconform.checks.observed import Observed
from lmconform.run import run_suite
from lmconform.run.play import play
from lmconform.target import Target
from lmconform.vocabulary import FINDINGS


def test_a_pairs_failure_replays_both_of_its_requests(server):
    target = Target(base_url=f"{server.base_url}/faults/stream-finish-differs", profile="reference")
    run = run_suite(target, apis=("chat",), include=["generation.pair.finish_agrees"])
    [verdict] = [verdict for verdict in run.verdicts if verdict.case_id == "chat/forced-enum-tool-stream"]
    assert str(verdict.outcome) == "FAILED"
    commands = [line.removeprefix("Reproduce: ") for line in verdict.message.splitlines()
                if line.startswith("Reproduce: ")]
    assert commands == verdict.record()["curl"].splitlines() and len(commands) == 2
    bodies = [json.loads(command.rsplit("--data-binary ", 1)[1].strip("'")) for command in commands]
    assert bodies[0]["stream"] is True and {key: value for key, value in bodies[0].items() if key != "stream"} == bodies[1]


def _played(server, case_id: str, fault: str | None = None) -> Observed:
    api = case_id.split("/")[0]
    case = next(case for case in load_cases(api) if case.id == case_id)
    base = f"{server.base_url}/faults/{fault}" if fault else server.base_url
    return play(case, Target(base_url=base, profile="reference"))


def _outcome(check_id: str, observed: Observed):
    return evaluate(REGISTRY[check_id], observed)


@pytest.mark.parametrize(("case_id", "check_id", "fault"), [
    ("chat/stop-spanning-pair", "chat.stop.left_out", "stop-ignored"),
    ("chat/stop-logprobs-tools", "generation.logprobs.given_or_refused", "logprobs-dropped"),
    ("responses/logprobs-include", "generation.logprobs.given_or_refused", "responses-logprobs-dropped"),
    ("responses/logprobs-include-tools", "generation.logprobs.given_or_refused", "responses-logprobs-dropped"),
])
def test_each_answer_of_a_pair_is_held_to_the_rule_and_the_failure_names_its_form(server, case_id, check_id, fault):
    """A server that breaks the rule in one form only (stop strings ignored without a stream, log probabilities
    dropped from a stream) fails the check whichever form the case sends first: the clean answer of one form beside
    the fault's answer of the other."""
    clean = _played(server, case_id)
    assert str(_outcome(check_id, clean).outcome) == "OK"
    broken = _played(server, case_id, fault)
    own, other = ("the stream", "the body") if clean.case.streamed else ("the body", "the stream")
    [other_key] = [key for key in clean.paired if key != "stored"]
    only_other = replace(clean, paired={**clean.paired, other_key: broken.paired[other_key]})
    only_own = replace(clean, exchange=broken.exchange)
    for observed, form in ((only_other, other), (only_own, own)):
        verdict = _outcome(check_id, observed)
        assert verdict.outcome in FINDINGS, (form, verdict.message)
        assert f"in {form}, " in verdict.message


def test_a_forgotten_response_is_judged_only_where_a_kept_one_was_read_back(server):
    """A 404 for a response created with `store: false` shows it was forgotten only on a server that reads kept
    responses back: with the kept one's GET answered 404 too (a server without the route), the check is UNSUPPORTED,
    not a pass; with no kept one read at all, it has nothing to judge."""
    clean = _played(server, "responses/store-false")
    assert str(_outcome("responses.store.forgotten_not_found", clean).outcome) == "OK"
    kept, forgotten = clean.turns["read-kept"], clean.turns["read"]
    assert kept.exchange.succeeded and forgotten.exchange.status == 404
    no_route = replace(clean, turns={**clean.turns, "read-kept": replace(kept, exchange=forgotten.exchange)})
    verdict = _outcome("responses.store.forgotten_not_found", no_route)
    assert str(verdict.outcome) == "UNSUPPORTED" and "reads no responses back" in verdict.message
    unread = replace(clean, turns={**clean.turns, "read-kept": replace(kept, exchange=None, skipped="not sent")})
    assert _outcome("responses.store.forgotten_not_found", unread) is None
    ignored = _played(server, "responses/store-false", "store-false-ignored")
    assert str(_outcome("responses.store.forgotten_not_found", ignored).outcome) == "FAILED"
