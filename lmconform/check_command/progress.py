"""The progress of `lmconform check` on a terminal: one line rewritten in place, with the cases done of all, the
findings so far and the case being played. Nothing is drawn when the output is not a terminal (a CI
log, a pipe): the headline at the end says it all there."""

from __future__ import annotations

import re
import shutil
from typing import TextIO

import pytest

from lmconform.vocabulary import Outcome

# The name a raised exception's text starts with (`_pytest.outcomes.Exit: `): a programmer's words, not a user's.
_EXCEPTION_NAME = re.compile(r"^[\w.]+(Error|Exit|Exception): ")
# What the line counts as a finding: what fails a run, with or without --strict (INFO only informs).
NOT_PASSING = frozenset({Outcome.FAILED, Outcome.NON_STRICT, Outcome.ERROR})


def case_of(item: pytest.Item) -> object | None:
    """The case a test of the suites judges (its `case` parameter); None for a test that judges no case."""
    return item.callspec.params.get("case") if hasattr(item, "callspec") else None


class Progress:
    """A pytest plugin: registered for the run it shows."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = stream.isatty()
        self.case_of: dict[str, str] = {}  # each test's case, by node id
        self.pairs_left: dict[str, int] = {}  # each case's (case, check) pairs not yet judged
        self.total = 0  # cases
        self.done = 0
        self.findings = 0
        self.current = ""
        self.not_loaded = ""  # why the suites could not be loaded, in one line

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # The terminal reporter is off (the progress line and the headline replace it), so what keeps a suite from
        # loading (a case file that breaks its schema) is kept here for the command to say.
        if report.failed and not self.not_loaded:
            lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
            said = next((line.removeprefix("E").strip() for line in reversed(lines) if line.startswith("E ")),
                        lines[-1] if lines else "unknown error")
            self.not_loaded = _EXCEPTION_NAME.sub("", said).removeprefix("lmconform: ")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            self.case_of[item.nodeid] = getattr(case_of(item), "id", item.nodeid)
        for case_id in self.case_of.values():
            self.pairs_left[case_id] = self.pairs_left.get(case_id, 0) + 1
        self.total = len(self.pairs_left)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.current = self.case_of.get(nodeid, nodeid)
        self.draw()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" and not (report.when == "setup" and not report.passed):
            return
        case_id = self.case_of.get(report.nodeid, report.nodeid)
        self.pairs_left[case_id] = self.pairs_left.get(case_id, 1) - 1
        self.done += self.pairs_left[case_id] == 0
        verdict = getattr(report, "lmconform_verdict", None)
        self.findings += bool(verdict and verdict["outcome"] in NOT_PASSING)
        self.draw()

    def draw(self) -> None:
        if not self.shown:
            return
        width = shutil.get_terminal_size().columns - 1
        found = f"{self.findings} finding{'' if self.findings == 1 else 's'}"
        line = f"[{self.done}/{self.total} cases] {found} · {self.current}"
        self.stream.write("\r" + line[:width].ljust(width))
        self.stream.flush()

    def finish(self) -> None:
        """Clear the line, so what follows starts on a clean one."""
        if self.shown and self.total:
            self.stream.write("\r" + " " * (shutil.get_terminal_size().columns - 1) + "\r")
            self.stream.flush()
