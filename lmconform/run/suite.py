"""The suite without pytest: which checks judge which cases, and a whole run of them against one target."""

from __future__ import annotations

from lmconform.apis import APIS
from lmconform.cases import Case, load_cases
from lmconform.checks import select
from lmconform.checks.registry import Check
from lmconform.expectations import Expectations
from lmconform.fuzz import chains
from lmconform.run.run import Run, discover
from lmconform.target import Target
from lmconform.vocabulary import Requirement


def applies(check: Check, case: Case) -> bool:
    """Whether `check` judges `case`, decided from the case alone; for a source of generated cases, from an example
    holding every kind of step it can generate."""
    if case.source == chains.SOURCE:
        return check.applies(chains.representative(case))
    return check.applies(case)


def run_requirements(target: Target, upstream: Target | None) -> frozenset[Requirement]:
    """What a run against `target` (and `upstream`, if any) offers the checks that require something."""
    return target.profile_requirements | ({Requirement.UPSTREAM} if upstream is not None else frozenset())


def run_suite(target: Target, apis: tuple[str, ...] = tuple(APIS), include=(), exclude=(),
              expectations: Expectations | None = None, upstream: Target | None = None) -> Run:
    """Every case of `apis` x every selected check that applies: what `pytest suites` does, without pytest."""
    run = Run(discover(target), expectations, discover(upstream) if upstream else None)
    checks = select(include, exclude, run_requirements(run.target, run.upstream))
    for api in apis:
        for case in load_cases(api):
            for check in checks:
                if applies(check, case):
                    run.judge(case, check)
    return run
