"""Every check proven able to fail: the suite against each reference-server fault fails exactly the checks
about that defect, and nothing on the clean server.

Each fault declares the checks it makes fail (`findings`, and `proxy_findings` in differential mode); the
declaration is the claim and this test its proof. A new check needs a fault that lists it: a fault of the reference
server, or for the checks of a VS Code language-model bridge one of the reference bridge (tests/test_bridge_catalogue.py
proves those). The agent checks are proven by the faults' `agent_findings`, with the agents' own runs
(tests/test_agents.py): a few seconds each, too many for every fault here.
"""

from collections import Counter

import pytest

from lmconform.bridge import FAULTS as BRIDGE_FAULTS
from lmconform.checks import REGISTRY
from lmconform.fuzz import requests
from lmconform.reference import FAULTS, ReferenceServer
from lmconform.reference.faults import generated
from lmconform.run import RunPlan, run_suite
from lmconform.target import Target
from lmconform.vocabulary import Level, Outcome

FINDINGS = {Outcome.FAILED, Outcome.NON_STRICT, Outcome.INFO}
# Faults whose defect leaves no verdict to give (only ERROR); tests/test_plugin.py tests the stall on its own.
NO_VERDICT_FAULTS = {"stall"}
VERDICT_FAULTS = [name for name in FAULTS if name not in NO_VERDICT_FAULTS]
# Differential mode: the clean reference server as the upstream, the same server with a fault as the "proxy".
DIFFERENTIAL_FAULTS = [None, *(name for name, fault in FAULTS.items() if fault.proxy_findings)]


def findings(server: ReferenceServer, fault: str | None) -> tuple[set[str], Counter]:
    base = server.base_url + (f"/faults/{fault}" if fault else "")
    # A 1 MiB cap proves the body-cap finding as well as the default would, without reading 32 MiB per case.
    plan = RunPlan(Target(base_url=base, read_timeout=5, profile="reference", max_body_bytes=1 << 20), probe=True)
    # Generated requests (200 a run) are played against the clean server and the faults only they reach; a fault
    # the written cases and the chain programs find is proven on those, which keeps the catalogue to minutes.
    requests_too = fault is None or fault in generated.NAMES
    run = plan.start()
    try:
        for api in plan.apis:
            for case, check in plan.pairs(api):
                if requests_too or case.source != requests.SOURCE:
                    run.judge(case, check)
    finally:
        run.close()
    return {v.check.id for v in run.verdicts if v.outcome in FINDINGS}, Counter(v.outcome for v in run.verdicts)


def test_the_clean_server_passes_every_check(server):
    found, outcomes = findings(server, None)
    assert found == set()
    assert set(outcomes) == {Outcome.OK}


@pytest.mark.parametrize("fault", sorted(VERDICT_FAULTS))
def test_a_fault_fails_exactly_the_checks_about_it(server, fault):
    found, outcomes = findings(server, fault)
    expected = FAULTS[fault].findings
    assert found == expected, f"unexpected: {found - expected}, missing: {expected - found}"
    if fault != "body-too-large":  # a cut-off body leaves the other checks without a verdict
        assert Outcome.ERROR not in outcomes


@pytest.mark.parametrize("fault", DIFFERENTIAL_FAULTS, ids=str)
def test_differential_mode_reports_what_the_proxy_changed(server, fault):
    proxy = server.base_url + (f"/faults/{fault}" if fault else "")
    run = run_suite(Target(base_url=proxy, fuzz_examples=0), include=["proxy.*"], upstream=Target(base_url=server.base_url))
    expected = FAULTS[fault].proxy_findings if fault else set()
    assert {v.check.id for v in run.verdicts if v.outcome in FINDINGS} == expected
    assert {v.outcome for v in run.verdicts} <= FINDINGS | {Outcome.OK}


def test_every_fault_declares_findings():
    assert {name for name, fault in FAULTS.items() if not fault.findings and not fault.variant} == NO_VERDICT_FAULTS


def test_a_variant_is_reported_at_info_level_at_most():
    # A variant is a valid form a real server sends (llama-server's `timings`, LiteLLM's usage chunk, keep-alive
    # comments): a check that reports one as NON-STRICT or FAILED raises a false alarm. The run against each is in
    # test_a_fault_fails_exactly_the_checks_about_it.
    variants = {name: fault for name, fault in FAULTS.items() if fault.variant}
    assert len(variants) >= 10 and all(fault.summary.startswith("variant: ") for fault in variants.values())
    for name, fault in variants.items():
        assert {REGISTRY[check].level for check in fault.findings} <= {Level.INFO}, name


def test_every_check_is_failed_by_some_fault():
    proven = set().union(*(fault.findings | fault.proxy_findings | fault.agent_findings for fault in FAULTS.values()),
                         *(fault.findings | (fault.symposium_findings or set()) for fault in BRIDGE_FAULTS.values()))
    assert set(REGISTRY) - proven == set(), "checks never seen failing"
    assert proven <= set(REGISTRY), "the faults name checks that do not exist"
