"""Cases played ahead: the embedded bridge's cases, each a process that mostly waits, are played in a thread beside
the one that judges. The verdicts are those of a run that plays them when a check asks; a check that asks for one
still being played waits for it; a failure to play one reaches the check that asks; a run that closes lets the case in
hand end (and with it its process) and plays no other."""

from __future__ import annotations

import threading
import time

import pytest

import lmconform.run.run as run_module
from lmconform.cases import load_cases
from lmconform.checks.observed import Observed
from lmconform.run import RunPlan
from lmconform.run.run import Run
from lmconform.target import Target

pytestmark = pytest.mark.waits

# The bridge cases that pace their parts and cancel one mid-stream: the ones whose timing a thread could change.
TIMED = ("vscodelm/cancel-while-streaming", "vscodelm/plain-turn", "vscodelm/tool-call-then-result")


def rows(run: Run) -> set[tuple[str, str, str]]:
    return {(verdict.case_id, verdict.check.id, str(verdict.outcome)) for verdict in run.verdicts}


@pytest.mark.slow
def test_the_embedded_bridge_cases_played_ahead_are_judged_as_when_played_on_demand():
    plan = RunPlan(Target(base_url=""), apis=("vscodelm",), cases=TIMED, probe=False)
    pairs = plan.pairs("vscodelm")
    assert [case.id for case in plan.played_ahead(case for case, _ in pairs)] == \
        [case.id for case, _ in pairs], "the embedded bridge's cases are played ahead"
    ahead = plan.run_all()
    on_demand = plan.start()  # no cases given: none played ahead
    try:
        for case, check in pairs:
            on_demand.judge(case, check)
    finally:
        on_demand.close()
    assert rows(ahead) == rows(on_demand) and len(rows(ahead)) > 20
    assert {outcome for *_, outcome in rows(ahead)} == {"OK"}


def test_only_the_embedded_bridge_without_faults_plays_ahead():
    cases = load_cases("vscodelm")[:2] + load_cases("chat")[:2]
    assert [case.api for case in RunPlan(Target(base_url="")).played_ahead(cases)] == ["vscodelm", "vscodelm"]
    assert RunPlan(Target(base_url=""), bridge_faults=("no-complete",)).played_ahead(cases) == []
    assert RunPlan(Target(base_url="", bridge_command=("my-bridge",))).played_ahead(cases) == []


class Held:
    """`play` standing in for the real one: each case waits until the test lets it end, or fails when told to."""

    def __init__(self, failing: str = "") -> None:
        self.started: list[str] = []
        self.ends: dict[str, threading.Event] = {}
        self.failing = failing

    def __call__(self, case, target, upstream=None, settings=None):
        self.started.append(case.id)
        if case.id == self.failing:
            raise ConnectionError(f"{case.id} could not be played")
        assert self.ends.setdefault(case.id, threading.Event()).wait(10), "the test never let the case end"
        return Observed(case, target, None, {})

    def end_soon(self, case_id: str) -> None:
        """Once the case has started, let it end a moment later (while the test waits for it)."""
        while case_id not in self.started:
            time.sleep(0.01)
        threading.Timer(0.2, self.ends.setdefault(case_id, threading.Event()).set).start()


@pytest.fixture
def held(monkeypatch) -> Held:
    held = Held()
    monkeypatch.setattr(run_module, "play", held)
    return held


def test_a_check_waits_for_its_case_played_ahead_and_close_plays_no_other(held):
    cases = load_cases("vscodelm")[:3]
    run = Run(Target(base_url="", bridge_command=("unused",)))
    run.play_ahead(cases)
    held.end_soon(cases[0].id)
    assert run.observe(cases[0]).case is cases[0]  # waited for the thread's play, not played again
    held.end_soon(cases[1].id)
    run.close()  # the case in hand ends; the third is never played
    assert held.started == [case.id for case in cases[:2]]


def test_a_case_that_fails_to_play_ahead_fails_the_check_that_asks_for_it(monkeypatch):
    case = load_cases("vscodelm")[0]
    monkeypatch.setattr(run_module, "play", Held(failing=case.id))
    run = Run(Target(base_url="", bridge_command=("unused",)))
    run.play_ahead([case])
    with pytest.raises(ConnectionError, match="could not be played"):
        run.observe(case)
    run.close()
