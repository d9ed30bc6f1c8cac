"""A run of 10,000 verdicts without a server, for measuring the HTML report: a pytest plugin (`-p many_verdicts`)
that stands in for the run lmconform's plugin would start, and gives each (case, check) pair a verdict by a fixed
rule: one in twenty a finding at the check's level, one in a hundred and one an ERROR, the rest OK.

    pytest tests/many_verdicts.py -p lmconform.plugin -p many_verdicts --results-json results.json --report report.html

Each case with a finding gets an exchange of EXCHANGE_CHARS characters in the record, as a streamed answer would.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import lmconform.checks  # noqa: F401  (registers the checks)
from lmconform.checks.evaluate import Verdict
from lmconform.checks.registry import REGISTRY
from lmconform.plugin import RUN_KEY
from lmconform.run import Run
from lmconform.suite_fixtures import judge  # noqa: F401  (the suites' judging, over the run below)
from lmconform.target import Target
from lmconform.vocabulary import FINDING_OUTCOME, Failure, Outcome

VERDICTS = 10_000
CHECKS = sorted(REGISTRY.values(), key=lambda check: check.id)
FINDING_EVERY = 20
ERROR_EVERY = 101
EXCHANGE_CHARS = 20_000


class ManyVerdicts(Run):
    def exchange_text(self, case_id: str) -> str:
        line = f'data: {{"case": "{case_id}", "text": "a word of the answer"}}\n\n'
        return f"POST http://127.0.0.1:9/v1/chat/completions\n\nHTTP 200\n\n{line * (EXCHANGE_CHARS // len(line))}"

    def _verdict(self, case, check) -> Verdict:
        number = case.number
        common = dict(case_id=case.id, check=check, curl=f"curl -sS http://127.0.0.1:9/v1/chat/completions -d '{number}'")
        if number % ERROR_EVERY == 0:
            return Verdict(outcome=Outcome.ERROR, detail=f"the target stalled after byte {number}", **common)
        if number % FINDING_EVERY == 0:
            failure = Failure("the property the check states", f"something else, number {number}",
                              f'SSE event #{number % 7} (byte {number}): data: {{"n": {number}}}')
            return Verdict(outcome=FINDING_OUTCOME[check.level], failures=(failure,), **common)
        return Verdict(outcome=Outcome.OK, **common)


@pytest.fixture(scope="session")
def lmconform_run(pytestconfig: pytest.Config):
    target = Target("http://127.0.0.1:9", label="ten-thousand", model="a-model",
                    fingerprint={"kind": "unknown", "evidence": ["GET /v1/models: 200"]})
    run = ManyVerdicts(target, checks=CHECKS)
    pytestconfig.stash[RUN_KEY] = run
    yield run


@pytest.mark.parametrize("number", range(VERDICTS))
def test_pair(number: int, judge) -> None:  # noqa: F811  (the fixture imported above)
    case = SimpleNamespace(id=f"chat/case-{number // len(CHECKS):04d}", number=number)
    judge(case, CHECKS[number % len(CHECKS)])
