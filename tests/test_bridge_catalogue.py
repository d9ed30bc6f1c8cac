"""Every vscodelm check proven able to fail: the suite's vscodelm cases against the reference bridge with each of its
faults fail exactly the checks that fault declares (lmconform.bridge.faults), and nothing against the clean bridge,
in both cancel profiles.

The bridge runs as the embedded run starts it: the deterministic echo agent, a short pause between parts so that a
cancel lands mid-stream. A fault shown only by an agent failure runs the openai agent in front of an endpoint that
refuses connections. The runs wait on processes far more than they compute, so they overlap.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import pytest

from lmconform.bridge import FAULTS
from lmconform.checks import REGISTRY
from lmconform.reference import FAULTS as SERVER_FAULTS
from lmconform.run import Run, run_suite
from lmconform.run.plan import embedded_bridge
from lmconform.target import Target
from lmconform.vocabulary import FINDINGS, Outcome

# The runs are made once, all together, by whichever process first needs one: on one worker, so that no other
# process makes them all again.
pytestmark = pytest.mark.xdist_group("bridge-catalogue")
PROFILES = ("strict", "symposium")
NO_VERDICT = frozenset({Outcome.ERROR, Outcome.UNSUPPORTED})


def refused_endpoint() -> str:
    """The address of a loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def bridge_run(fault: str | None, profile: str) -> Run:
    command = embedded_bridge((fault,) if fault else (), profile)
    if fault and FAULTS[fault].needs_failing_agent:
        command += ("--agent", "openai", "--endpoint", refused_endpoint(), "--model", "m")
    return run_suite(Target(base_url="", bridge_command=command, bridge_profile=profile, read_timeout=10),
                     apis=("vscodelm",))


def expected_findings(fault: str | None, profile: str) -> frozenset[str]:
    if fault is None:
        return frozenset()
    declared = FAULTS[fault]
    return declared.symposium_findings if profile == "symposium" and declared.symposium_findings is not None \
        else declared.findings


# Every fault in the strict profile; in the symposium profile the clean bridge and the faults whose findings differ.
RUNS = [(None, "strict"), (None, "symposium"), *((name, "strict") for name in FAULTS),
        *((name, "symposium") for name, fault in FAULTS.items() if fault.symposium_findings is not None)]


@cache
def all_runs() -> dict[tuple[str | None, str], Run]:
    with ThreadPoolExecutor(6) as pool:
        return dict(zip(RUNS, pool.map(lambda run: bridge_run(*run), RUNS)))


@pytest.mark.parametrize(("fault", "profile"), RUNS, ids=[f"{fault or 'clean'}-{profile}" for fault, profile in RUNS])
def test_a_bridge_fault_fails_exactly_the_checks_it_declares(fault, profile):
    run = all_runs()[fault, profile]
    found = {verdict.check.id for verdict in run.verdicts if verdict.outcome in FINDINGS}
    expected = expected_findings(fault, profile)
    assert found == expected, f"unexpected: {found - expected}, missing: {expected - found}"
    without = {verdict.check.id for verdict in run.verdicts if verdict.outcome in NO_VERDICT}
    allowed = FAULTS[fault].no_verdict if fault else frozenset()
    assert without <= allowed, [verdict.message for verdict in run.verdicts
                                if verdict.outcome in NO_VERDICT and verdict.check.id not in allowed][:3]


def test_the_clean_bridge_gives_every_vscodelm_check_a_verdict():
    judged = {verdict.check.id for profile in PROFILES for verdict in all_runs()[None, profile].verdicts
              if verdict.outcome is Outcome.OK}
    assert {check for check in REGISTRY if check.startswith("vscodelm.")} <= judged


def test_every_vscodelm_check_is_failed_by_some_bridge_fault():
    proven = set().union(*(fault.findings | (fault.symposium_findings or frozenset()) for fault in FAULTS.values()))
    assert {check for check in REGISTRY if check.startswith("vscodelm.")} <= proven
    assert proven <= set(REGISTRY), "the bridge's faults name checks that do not exist"


def test_every_fault_declares_findings_and_a_place_apart_from_the_servers():
    assert all(fault.findings for fault in FAULTS.values())
    assert not set(FAULTS) & set(SERVER_FAULTS), "a bridge fault and a server fault share a name"
