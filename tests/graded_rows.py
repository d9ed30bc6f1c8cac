"""The rows of a graded matrix's run, for the tests of its grading checks (tests/test_parameters.py,
tests/test_request_fields.py): the results rows of its cases played against a server, and the rows of its grading
check by the row of the matrix they grade."""

from __future__ import annotations

from collections.abc import Iterable

from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import Target


def played_rows(base_url: str, apis: tuple[str, ...], cases: Iterable[str], checks: tuple[str, ...]) -> list[dict]:
    """The results row of each verdict of `checks` on `cases`, played against the server at `base_url`."""
    run = run_suite(Target(base_url=base_url), apis=apis, include=list(checks), cases=tuple(sorted(cases)),
                    settings=RunSettings(fuzz_examples=0))
    return [verdict.record() for verdict in run.verdicts]


def graded_by_family(found: list[dict], check: str, key: str) -> dict[str, dict]:
    """The rows of `check`, by the family its grade (the results record's `key`) names."""
    return {row[key]["family"]: row for row in found if row["check"] == check}
