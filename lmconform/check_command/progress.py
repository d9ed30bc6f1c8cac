"""The progress of `lmconform check` on a terminal: one line rewritten in place, with the (case, check) pairs done
of all, the findings so far and the case being played. Nothing is drawn when the output is not a terminal (a CI
log, a pipe): the headline at the end says it all there."""

from __future__ import annotations

import shutil
from typing import TextIO

import pytest

from lmconform.vocabulary import Outcome

# What the line counts as a finding: what fails a run, with or without --strict (INFO only informs).
NOT_PASSING = frozenset({Outcome.FAILED, Outcome.NON_STRICT, Outcome.ERROR})


class Progress:
    """A pytest plugin: registered for the run it shows."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = stream.isatty()
        self.total = 0
        self.done = 0
        self.findings = 0
        self.current = ""

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        test, _, pair = nodeid.rpartition("[")
        api = test.rpartition("::test_")[2]
        self.current = f"{api}/{pair.split(':', 1)[0]}" if pair else nodeid
        self.draw()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" and not (report.when == "setup" and not report.passed):
            return
        self.done += 1
        verdict = getattr(report, "lmconform_verdict", None)
        self.findings += bool(verdict and verdict["outcome"] in NOT_PASSING)
        self.draw()

    def draw(self) -> None:
        if not self.shown:
            return
        width = shutil.get_terminal_size().columns - 1
        found = f"{self.findings} finding{'' if self.findings == 1 else 's'}"
        line = f"[{self.done}/{self.total}] {found} · {self.current}"
        self.stream.write("\r" + line[:width].ljust(width))
        self.stream.flush()

    def finish(self) -> None:
        """Clear the line, so what follows starts on a clean one."""
        if self.shown and self.total:
            self.stream.write("\r" + " " * (shutil.get_terminal_size().columns - 1) + "\r")
            self.stream.flush()
