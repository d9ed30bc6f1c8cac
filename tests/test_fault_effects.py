"""Every fault's effect, from the registry: a fault added to any API or transport (the reference server's, the
reference bridge's, one only generated requests reach) gets its test here without anyone writing one. Under the
fault, the checks it proves (tests/fault_effects.py) fail on the case its catalogue row says they show on; on the
clean server or bridge, the same checks on the same case pass. A fault no check fails has an effect test written for
it, on the wire (registered with `FaultEffects.of` in the test module of its kind)."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

import budget
import pytest
from fault_effects import TABLE, WRITTEN, faults_with_findings, faults_without_findings, proven_checks

from lmconform.api_table import APIS, STDIO
from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import Verdict
from lmconform.reference.faults import registered
from lmconform.run import Run
from lmconform.run.run import applies
from lmconform.settings import DEFAULT_FUZZ_SHRINK, RunSettings
from lmconform.vocabulary import FINDINGS, Outcome
from tools.catalogue import bridge_run, server_run

FAULTS = registered()
CASES = {case.id: case for api in APIS for case in load_cases(api)}
# As the catalogue's runs: a finding of generated requests is shrunk with fewer requests in `make check`.
SETTINGS = RunSettings(fuzz_shrink=budget.examples(DEFAULT_FUZZ_SHRINK))


def its_case(fault: str, checks: list[str]) -> set[str]:
    """The cases of the fault's row that its checks judge: where the row says they show (one, most often)."""
    return {case for case in TABLE.row(fault).shown_by if any(applies(REGISTRY[check], CASES[case]) for check in checks)}


def played(fault: str, cases: set[str], checks: list[str], server) -> Run:
    if FAULTS[fault].transport == STDIO:
        return bridge_run(fault, "strict", cases, checks)
    return server_run(server.base_url, fault, cases=cases, checks=checks, settings=SETTINGS)


@cache
def clean_bridge() -> Run:
    """The clean bridge on the cases of every bridge fault's row, with their checks: one process for them all."""
    bridged = [name for name in faults_with_findings() if FAULTS[name].transport == STDIO]
    return bridge_run(None, "strict", set().union(*(TABLE.row(name).shown_by for name in bridged)),
                      sorted(set().union(*(proven_checks(name) for name in bridged))))


def played_clean(fault: str, cases: set[str], checks: list[str], server) -> list[Verdict]:
    """The verdicts of `checks` on `cases` where nothing is broken; generated requests send the fewer requests of a
    clean run's (tests/budget.py)."""
    if FAULTS[fault].transport == STDIO:
        run = clean_bridge()
    else:
        run = server_run(server.base_url, None, cases=cases, checks=checks,
                         settings=RunSettings(fuzz_examples=budget.fuzz_examples()))
    return [verdict for verdict in run.verdicts if verdict.case_id in cases and verdict.check.id in checks]


@pytest.mark.parametrize("fault", faults_with_findings())
def test_a_fault_fails_the_checks_it_proves_where_the_clean_server_passes_them(server, fault):
    checks = proven_checks(fault)
    cases = its_case(fault, checks)
    assert cases, f"{fault}: its row names no case its checks judge (`make catalogue`)"
    failed = {verdict.check.id for verdict in played(fault, cases, checks, server).verdicts
              if verdict.outcome in FINDINGS}
    # Which checks a stateful fault fails follows from the whole run, in its order (a request refused the first
    # time it is seen): on its cases alone, some of them.
    missing = set(checks) - failed if not FAULTS[fault].stateful or not failed else set()
    assert not missing, f"{fault} does not fail {sorted(missing)} on {sorted(cases)}"
    # A check passes where it finds nothing to judge (no error event in a clean stream) or judges it right.
    wrong = [verdict.message for verdict in played_clean(fault, cases, checks, server) if verdict.outcome is not Outcome.OK]
    assert not wrong, wrong[:3]


def test_a_fault_no_check_fails_has_an_effect_test_written_for_it():
    for module in sorted(Path(__file__).parent.glob("test_*.py")):
        if "FaultEffects()" in module.read_text():
            importlib.import_module(module.stem)
    written = {name for effects in WRITTEN for name in effects}
    assert written <= set(FAULTS), f"effect tests of no fault: {sorted(written - set(FAULTS))}"
    assert set(faults_without_findings()) <= written, sorted(set(faults_without_findings()) - written)
