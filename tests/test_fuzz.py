"""The chain fuzzer finds chaining defects on its own, within its default budget, and prints how to replay them."""

import pytest

from lmconform.fuzz.chains import describe, fuzz_chains
from lmconform.reference import ReferenceServer
from lmconform.runner import run_suite
from lmconform.target import DEFAULT_FUZZ_EXAMPLES, Target
from lmconform.wire.http import send


def run(server: ReferenceServer, fault: str | None):
    target = Target(base_url=server.base_url + (f"/faults/{fault}" if fault else ""))
    return fuzz_chains(lambda body: send(target, "POST", "/v1/responses", body), "lmconform-reference",
                       DEFAULT_FUZZ_EXAMPLES)


def test_the_clean_server_keeps_every_invariant(server):
    assert run(server, None) is None


@pytest.mark.parametrize("fault, invariant", [
    ("chain-ignored", "input tokens grow along a chain"),
    ("unknown-previous-200", "an unknown previous_response_id gets a 4xx"),
    ("fork-shares-state", "two children of one parent"),
    ("previous-id-echo-wrong", "echoes previous_response_id"),
])
def test_a_chaining_defect_is_found_and_shrunk_to_a_replayable_sequence(server, fault, invariant):
    finding = run(server, fault)
    assert finding is not None and invariant in finding.invariant
    report = describe(finding)
    assert "state." in finding.program  # hypothesis's shrunk program: the rules that were run, in order
    assert finding.curls and all(curl.startswith("curl -sS -N -X POST") for curl in finding.curls)
    assert "/v1/responses" in report and "Replay:" in report
    # Shrunk: a defect that needs one chained request is replayed with a handful of requests, not dozens.
    assert len(finding.curls) <= 6, report


def test_generated_requests_carry_the_runs_output_cap_and_temperature(server):
    # Against a real model every generated request must be as bounded as the case's own.
    target = Target(base_url=server.base_url + "/faults/chain-ignored", max_tokens=24, temperature=0)
    run = run_suite(target, apis=("responses",), include=("responses.fuzz.chain_invariants",))
    (verdict,) = [v for v in run.verdicts if v.case_id == "responses/fuzz-chains"]
    replayed = [line for line in verdict.evidence.splitlines() if line.strip().startswith("curl ")]
    assert replayed and all('"max_output_tokens": 24' in curl and '"temperature": 0' in curl for curl in replayed)
