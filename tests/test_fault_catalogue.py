"""Every check proven able to fail: the suite against each reference-server fault fails exactly the checks the fault
× check table says (fixtures/catalogue.toml, written by `make catalogue` from these very runs), and nothing on the
clean server; each check names the faults that prove it (`proven_by`), and each of those fails it.

A new check needs a fault that fails it, named in its `proven_by`: a fault of the reference server, or for the
checks of a VS Code language-model bridge one of the reference bridge (tests/test_bridge_catalogue.py runs those).
A fault that fails other checks than the table says, or a table that no longer matches the faults, is a failure here:
`make catalogue` writes the table again, and the diff shows what changed. The agent checks judge a coding agent's
run, which these runs do not make: tests/test_agents.py holds their proven_by to the fault × agent matrix the agents'
own runs make (docs/agents.md).
"""

from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import budget
import pytest

from lmconform.api_table import APIS
from lmconform.bridge import FAULTS as BRIDGE_FAULTS
from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import Verdict
from lmconform.reference import FAULTS
from lmconform.run.play import play
from lmconform.run.run import applies
from lmconform.settings import DEFAULT_FUZZ_SHRINK, RunSettings
from lmconform.vocabulary import FINDINGS, Level, Outcome
from tools.catalogue import (
    CATALOGUE,
    answers_form,
    catalogue_order,
    changed_by,
    clean_plays,
    differential_faults,
    dumps,
    findings_of,
    first_shown_on,
    load,
    proxy_run,
    server_run,
    without_draws,
)

TABLE = load()
# Faults whose defect leaves no verdict to give (only ERROR); tests/test_plugin.py tests the stall on its own.
NO_VERDICT_FAULTS = {"stall"}
VERDICT_FAULTS = [name for name in FAULTS if name not in NO_VERDICT_FAULTS]
# Faults whose answers are cut off (at the body cap, or by the server ending the connection before the body's end): the
# checks of the body's content are left without a verdict, ERROR, and only the check of the cut gives one.
CUT_OFF_FAULTS = {"body-too-large", "connection-reset", "content-length-long"}
# Cases whose answers carry random bytes on purpose (encrypted reasoning): never equal to another play's.
RANDOM_BY_DESIGN = {"responses/recorded-codex-0-171-0-1", "responses/recorded-codex-0-171-0-2",
                    "responses/replay-reasoning-encrypted"}
# Differential mode: the clean reference server as the upstream, the same server with a fault that proves a
# differential check as the "proxy".
DIFFERENTIAL_FAULTS = [None, *differential_faults()]


# A finding of generated requests is shrunk before it is reported; the row names the check, which a shorter search
# finds as well: in `make check` it may send a tenth of the requests.
FAULT_SETTINGS = RunSettings(fuzz_shrink=budget.examples(DEFAULT_FUZZ_SHRINK))


def played(fault: str) -> tuple[tuple[str, ...] | None, set[str] | None]:
    """The APIs (None: all) and cases (None: all of them) played against a fault. Its own API's cases (every API's
    for the wire's and the model list's faults, which reach all of them): all in `make test`; in `make check` those
    its row says its findings show on (a sample when it names none, tests/budget.py). The other APIs' cases: a tenth
    of them in `make test`, none in `make check`. `make catalogue`, which writes the table, plays every case against
    every fault: checked so against every fault of the catalogue, no finding of an API's fault falls outside that
    API's cases, and `make test`'s sample of the other APIs keeps that in sight. Of those, a fault that changes only
    answers is played on the cases the clean server says it would change (tools.catalogue.server_run)."""
    own = None if FAULTS[fault].api in ("http", "models") else (FAULTS[fault].api,)
    if budget.CHECK and not FAULTS[fault].stateful:  # a stateful fault's findings follow from the whole run
        return own, budget.cases_played(TABLE.server[fault].shown_by, own or APIS)
    if own is None:
        return None, None
    return None, {case.id for case in load_cases(own[0])} | set(budget.sampled(APIS))


def test_the_table_has_a_row_for_every_fault_and_no_other():
    assert list(TABLE.server) == catalogue_order(), "`make catalogue` writes the table for the catalogue as it is"
    assert list(TABLE.bridge) == list(BRIDGE_FAULTS)


def test_the_clean_server_passes_every_check(server):
    run = server_run(server.base_url, None, settings=RunSettings(fuzz_examples=budget.fuzz_examples()))
    assert findings_of(run) == set()
    # Not even a known limit of LM Studio's dialect: the clean server takes Codex's tool types as OpenAI does, and
    # LM Studio's refusal of them (causes.toml) is its variant responses-function-tools-only.
    assert set(Counter(verdict.outcome for verdict in run.verdicts)) == {Outcome.OK}


@pytest.fixture(scope="module")
def clean_answers(server):
    """The clean server's answers, each case played once when a fault's run first asks which faults would change it:
    a case the fault would leave as the clean server answers it is neither played nor judged again
    (tools.catalogue.server_run), for test_the_clean_server_passes_every_check judges every case of the clean
    server."""
    plays = clean_plays(server.base_url, FAULT_SETTINGS)
    yield plays
    plays.close()


@pytest.mark.parametrize("fault", sorted(VERDICT_FAULTS))
def test_a_fault_fails_exactly_the_checks_of_its_row(server, clean_answers, fault):
    expected = TABLE.server[fault].findings
    run = server_run(server.base_url, fault, *played(fault), settings=FAULT_SETTINGS, clean=clean_answers)
    found = findings_of(run)
    assert found == expected, f"unexpected: {found - expected}, missing: {expected - found} (`make catalogue`?)"
    if fault not in CUT_OFF_FAULTS:
        assert Outcome.ERROR not in {verdict.outcome for verdict in run.verdicts}


# Of the cases the clean server says a fault would leave alone, how many are played against it to see that it does.
LEFT_ALONE_PLAYED = 1 if budget.CHECK else 3


def test_a_case_is_left_unplayed_only_where_the_fault_leaves_its_answers_as_the_clean_servers(server, clean_answers):
    """What spares a fault's run the cases it does not change: the clean server names, with each answer, the faults
    that could change it (its `/changed-by` prefix), and each fault it follows (a flag, or one that changes only
    answers), played on a few cases
    said to be left alone (of its API, where it leaves any), answers them as the clean server does: the same once their times and random ids
    are masked (two clean plays compare so, but for encrypted reasoning, random by design). A stage's faults whose
    effect may not show in an answer's bytes (its timing, its connection, the server's state) are never left out."""
    other = clean_plays(server.base_url, FAULT_SETTINGS)
    try:
        cases = [case for api in APIS if api != "vscodelm" for case in budget.spread(load_cases(api))
                 if not case.source and case.id not in RANDOM_BY_DESIGN]
        differing = [case.id for case in cases
                     if answers_form(clean_answers.examples(case)) != answers_form(other.examples(case))]
    finally:
        other.close()
    assert cases and not differing
    stream, body = (next(case for case in load_cases("chat") if case.id == name)
                    for name in ("chat/forced-enum-tool-stream", "chat/non-stream-text"))
    assert "tool-index-one" in changed_by(clean_answers.examples(stream))
    assert "tool-index-one" not in changed_by(clean_answers.examples(body))
    written = [case for api in APIS if api != "vscodelm" for case in load_cases(api)
               if not case.source and not case.overflows_context and case.id not in RANDOM_BY_DESIGN]
    untried = []
    for name, fault in FAULTS.items():
        if not fault.traced:
            continue
        target = replace(clean_answers.target, base_url=f"{server.base_url}/faults/{name}")
        # Its API's cases said to be left alone, or else the others' (it changes every case of its API).
        alone = sorted((case for case in written if name not in (changed_by(clean_answers.examples(case)) or {name})),
                       key=lambda case: case.api not in (fault.api, *(() if fault.api in APIS else APIS)))
        untried += [] if alone else [name]
        for case in alone[::max(1, len(alone) // LEFT_ALONE_PLAYED)][:LEFT_ALONE_PLAYED]:
            answers = [play(case, target, settings=FAULT_SETTINGS) for _ in clean_answers.examples(case)]
            assert answers_form(answers) == answers_form(clean_answers.examples(case)), (name, case.id)
    assert not untried, f"these change every case: {untried}"
    assert all(FAULTS[name].traced for name in ("tool-index-one", "messages-no-message-stop", "chain-ignored",
                                                 "prefill-comment-keepalives"))
    assert not any(FAULTS[name].traced for name in ("drip", "stall", "content-length-short",
                                                    "connection-reset", "model-loading-once"))


def test_the_masks_keep_which_id_is_which():
    first, second = b"resp_" + b"a" * 24, b"resp_" + b"b" * 24
    one_id_twice = b'{"id":"%s","previous":"%s","created":1764720000}' % (first, first)
    two_ids = b'{"id":"%s","previous":"%s","created":1764720001}' % (first, second)
    assert without_draws(one_id_twice, {}) == b'{"id":"id0","previous":"id0","created":T}'
    assert without_draws(two_ids, {}) == b'{"id":"id0","previous":"id1","created":T}'
    assert without_draws(b'{"created_at":1764720000,"completed_at":1764720001}', {}) == \
        b'{"created_at":T,"completed_at":T}'
    # Another clock's time, or one in milliseconds, is not a draw: it shows.
    assert without_draws(b'{"created":1764720000000}', {}) == b'{"created":1764720000000}'
    assert without_draws(b'"call_id":"call_1234567890123456"', {}) == b'"call_id":"id0"'


@pytest.mark.parametrize("fault", DIFFERENTIAL_FAULTS, ids=str)
def test_differential_mode_reports_what_the_proxy_changed(server, fault):
    shown = TABLE.server[fault].shown_by if fault else ()
    run = proxy_run(server.base_url, fault, budget.cases_played(shown, APIS))
    expected = TABLE.server[fault].proxy_findings if fault else set()
    assert findings_of(run) == expected
    assert {verdict.outcome for verdict in run.verdicts} <= FINDINGS | {Outcome.OK}


def test_every_fault_but_the_stall_fails_some_check():
    assert {name for name, row in TABLE.server.items() if not row.findings and not FAULTS[name].variant} \
        == NO_VERDICT_FAULTS


def test_a_variant_is_reported_at_info_level_at_most():
    # A variant is a valid form a real server sends (llama-server's `timings`, LiteLLM's usage chunk, keep-alive
    # comments): a check that reports one as NON-STRICT or FAILED raises a false alarm. The run against each is in
    # test_a_fault_fails_exactly_the_checks_of_its_row.
    variants = {name: fault for name, fault in FAULTS.items() if fault.variant}
    assert len(variants) >= 10 and all(fault.summary.startswith("variant: ") for fault in variants.values())
    for name in variants:
        assert {REGISTRY[check].level for check in TABLE.server[name].findings} <= {Level.INFO}, name


@pytest.mark.parametrize("check", sorted(check.id for check in REGISTRY.values() if check.kind != "agent"))
def test_a_check_is_failed_by_each_fault_that_proves_it(check):
    proven_by = REGISTRY[check].proven_by
    assert proven_by, f"{check} names no fault that proves it can fail (its proven_by)"
    for name in proven_by:
        row = TABLE.row(name)
        assert row is not None, f"{check}: no fault is called {name!r}"
        assert row.proves(check), f"{check}: {name} does not fail it (fixtures/catalogue.toml)"


def test_each_finding_of_a_row_shows_on_a_case_the_row_names():
    # What `make check` plays against a fault: a finding no named case can show would go missing there. (A server
    # fault's proxy_findings come from the differential runs, which play every case.)
    cases = {case.id: case for api in APIS for case in load_cases(api)}
    rows = [*((name, row, row.findings) for name, row in TABLE.server.items()),
            *((name, row, row.failed()) for name, row in TABLE.bridge.items())]
    for name, row, findings in rows:
        assert row.shown_by <= set(cases), f"{name}: shown_by names cases that no longer exist (`make catalogue`)"
        shown = [cases[case] for case in row.shown_by]
        for check in findings:
            assert any(applies(REGISTRY[check], case) for case in shown), \
                f"{name}: no case of its shown_by is one {check} judges (`make catalogue`)"


def test_a_finding_is_shown_by_the_first_written_case_it_shows_on_before_any_generated_one():
    check, other = REGISTRY["responses.store.forgotten_not_found"], REGISTRY["generation.answer.not_empty"]
    run = SimpleNamespace(verdicts=[Verdict("responses/fuzz-chains", check, Outcome.FAILED),
                                    Verdict("responses/fuzz-chains", other, Outcome.FAILED),
                                    Verdict("responses/text-stream", check, Outcome.OK),
                                    Verdict("responses/store-false", check, Outcome.FAILED),
                                    Verdict("responses/stored-state", check, Outcome.FAILED)])
    assert first_shown_on(run) == {"responses/store-false", "responses/fuzz-chains"}


def test_the_table_is_written_as_it_reads():
    assert dumps(TABLE) == CATALOGUE.read_text()


def test_the_table_names_only_checks_that_exist():
    named = set().union(*(row.findings | row.proxy_findings | (row.symposium_findings or frozenset())
                          for row in (*TABLE.server.values(), *TABLE.bridge.values())))
    assert named <= set(REGISTRY), "`make catalogue`: the table names checks that no longer exist"
