"""The suites' fixtures: the run against the target, and `judge`, which turns a verdict into a test's outcome. They
are imported by the suites' conftest (and by a test's own plugin that judges without a server), not registered by
the `pytest11` plugin: a project that has lmconform installed and never runs a suite sees no lmconform fixture."""

from __future__ import annotations

import pytest

from lmconform.cases import Case
from lmconform.checks.registry import Check
from lmconform.exit_status import UNREACHABLE
from lmconform.plugin import (
    EXCHANGE_KEY,
    EXCHANGES_SENT_KEY,
    FAILURE_TEXT_KEY,
    NOTHING_TO_JUDGE_KEY,
    PLAN_KEY,
    RUN_KEY,
    TIMING_KEY,
    VERDICT_KEY,
    strict,
)
from lmconform.run import TargetUnreachable
from lmconform.run.exchanges import keeps_exchange
from lmconform.vocabulary import Outcome


@pytest.fixture(scope="session")
def lmconform_run(pytestconfig: pytest.Config, request: pytest.FixtureRequest):
    """The run against the target; the embedded reference server when no --endpoint was given. It loads the SDKs
    of the client checks left once pytest has selected (`-k`), and of no other; of the cases left, it plays ahead
    those the plan plays so (RunPlan.played_ahead)."""
    plan = pytestconfig.stash[PLAN_KEY]
    judged = [callspec.params for callspec in (getattr(item, "callspec", None) for item in request.session.items)
              if callspec]
    clients = {params["check"].surface for params in judged
               if isinstance(params.get("check"), Check) and params["check"].kind == "client"}
    # A pytest-xdist worker is handed its tests a batch at a time: which cases are its own is not known yet.
    cases = [] if hasattr(pytestconfig, "workerinput") else \
        [params["case"] for params in judged if isinstance(params.get("case"), Case)]
    try:
        run = plan.start(clients, cases)
    except TargetUnreachable as error:
        hint = f"Is the server running? (--endpoint {plan.target.base_url})" if plan.target.base_url else \
            f"Is the command right? (--bridge-command {plan.target.shown_command!r})"
        pytest.exit(f"lmconform: {error}. {hint}", returncode=UNREACHABLE)
    pytestconfig.stash[RUN_KEY] = run
    yield run
    run.close()


@pytest.fixture
def judge(lmconform_run, request: pytest.FixtureRequest):
    """Judge one (case, check) pair and turn the verdict into the test's outcome."""

    def fail(text: str) -> None:
        request.node.stash[FAILURE_TEXT_KEY] = text
        pytest.fail(text, pytrace=False)

    def judge_pair(case, check) -> None:
        verdict = lmconform_run.judge(case, check)
        if verdict is None:
            # Not a verdict: the results record has no row for it and the HTML report no line. pytest has no
            # outcome for "did not apply after all" (the answer decides it, after collection): a skip is closest.
            request.node.stash[NOTHING_TO_JUDGE_KEY] = True
            pytest.skip(f"[{check.id}] nothing to judge in this answer")
        record = verdict.record()
        request.node.stash[VERDICT_KEY] = record
        sent = request.config.stash[EXCHANGES_SENT_KEY]
        if case.id not in sent:  # the case's timing, once per case and process; its exchange, if kept
            sent.add(case.id)
            request.node.stash[TIMING_KEY] = lmconform_run.timing(case.id)
        if keeps_exchange(verdict.outcome) and (case.id, "exchange") not in sent:
            sent.add((case.id, "exchange"))
            request.node.stash[EXCHANGE_KEY] = lmconform_run.exchange_text(case.id)
        # JUnit shows user properties: plain strings a CI system can filter on.
        request.node.user_properties.extend((f"lmconform.{name}", record[name])
                                            for name in ("case", "check", "level", "outcome"))
        expected = verdict.expected
        allowed = expected["outcomes"] if expected else ()
        if verdict.outcome in allowed and verdict.outcome is not Outcome.OK:
            pytest.xfail(f"[{check.id}] known {verdict.outcome}: {expected['reason']}")
        if expected and verdict.outcome is Outcome.OK and Outcome.OK not in allowed:
            fail(f"{verdict.headline}\nUNEXPECTED PASS: {expected['file']} expects {' or '.join(allowed)} "
                 f"({expected['reason']}); the defect is gone, so remove the entry")
        if verdict.outcome is Outcome.UNSUPPORTED:
            pytest.skip(verdict.message)
        if verdict.outcome in (Outcome.FAILED, Outcome.ERROR) or (
            verdict.outcome is Outcome.NON_STRICT and strict(request.config)
        ):
            fail(verdict.message)

    return judge_pair
