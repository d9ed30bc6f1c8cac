"""Every vscodelm check proven able to fail: the suite's vscodelm cases against the reference bridge with each of its
faults fail exactly the checks the fault × check table says (fixtures/catalogue.toml, written by `make catalogue` from
these very runs), and nothing against the clean bridge, in both cancel profiles.

The bridge runs as the embedded run starts it: the deterministic echo agent, a short pause between parts so that a
cancel lands mid-stream. A fault shown only by an agent failure runs the openai agent in front of an endpoint that
refuses connections. The runs wait on processes far more than they compute, so they overlap.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache

import budget
import pytest

from lmconform.bridge import FAULTS
from lmconform.checks import REGISTRY
from lmconform.reference import FAULTS as SERVER_FAULTS
from lmconform.run import Run
from lmconform.vocabulary import Outcome
from tools.catalogue import BRIDGE_PROFILES as PROFILES
from tools.catalogue import bridge_run, findings_of, load

# The runs are made once, all together, by whichever process first needs one: on one worker, so that no other
# process makes them all again.
pytestmark = pytest.mark.xdist_group("bridge-catalogue")
TABLE = load().bridge
NO_VERDICT = frozenset({Outcome.ERROR, Outcome.UNSUPPORTED})


def expected_findings(fault: str | None, profile: str) -> frozenset[str]:
    if fault is None:
        return frozenset()
    row = TABLE[fault]
    return row.symposium_findings if profile == "symposium" and row.symposium_findings is not None else row.findings


# Every fault in the strict profile; in the symposium profile the clean bridge and the faults whose findings differ.
RUNS = [(None, "strict"), (None, "symposium"), *((name, "strict") for name in FAULTS),
        *((name, "symposium") for name, row in TABLE.items() if row.symposium_findings is not None)]


def run(fault: str | None, profile: str) -> Run:
    """The clean bridge plays every case; a fault the cases tests/budget.py picks from its row."""
    return bridge_run(fault, profile, budget.cases_played(TABLE[fault].shown_by, ("vscodelm",)) if fault else None)


@cache
def all_runs() -> dict[tuple[str | None, str], Run]:
    with ThreadPoolExecutor(6) as pool:
        return dict(zip(RUNS, pool.map(lambda fault_and_profile: run(*fault_and_profile), RUNS)))


@pytest.mark.parametrize(("fault", "profile"), RUNS, ids=[f"{fault or 'clean'}-{profile}" for fault, profile in RUNS])
def test_a_bridge_fault_fails_exactly_the_checks_of_its_row(fault, profile):
    run = all_runs()[fault, profile]
    found = findings_of(run)
    expected = expected_findings(fault, profile)
    assert found == expected, f"unexpected: {found - expected}, missing: {expected - found} (`make catalogue`?)"
    without = {verdict.check.id for verdict in run.verdicts if verdict.outcome in NO_VERDICT}
    allowed = FAULTS[fault].no_verdict if fault else frozenset()
    assert without <= allowed, [verdict.message for verdict in run.verdicts
                                if verdict.outcome in NO_VERDICT and verdict.check.id not in allowed][:3]


def test_the_clean_bridge_gives_every_vscodelm_check_a_verdict():
    judged = {verdict.check.id for profile in PROFILES for verdict in all_runs()[None, profile].verdicts
              if verdict.outcome is Outcome.OK}
    assert {check for check in REGISTRY if check.startswith("vscodelm.")} <= judged


def test_every_fault_fails_some_check_and_has_a_place_apart_from_the_servers():
    assert all(row.findings for row in TABLE.values())
    assert not set(FAULTS) & set(SERVER_FAULTS), "a bridge fault and a server fault share a name"
