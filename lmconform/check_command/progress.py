"""The progress of `lmconform check`: the cases done of all, the findings so far and the case being played. On a
terminal, one line rewritten in place; in a log (a CI job's, a pipe), where a carriage return draws nothing, that line
written whole every LOG_INTERVAL_S seconds, so that a long run shows it is alive and where it is."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import threading
from typing import TextIO

import pytest

from lmconform.vocabulary import Outcome

# The name a raised exception's text starts with (`_pytest.outcomes.Exit: `): a programmer's words, not a user's.
_EXCEPTION_NAME = re.compile(r"^[\w.]+(Error|Exit|Exception): ")
# What the line counts as a finding: what fails a run, with or without --strict (INFO only informs).
NOT_PASSING = frozenset({Outcome.FAILED, Outcome.NON_STRICT, Outcome.ERROR})
# How often a log gets the line: often enough that a step of a CI job never looks hung (a slow model's case can take
# minutes), seldom enough that a run of the whole suite writes a few dozen lines.
LOG_INTERVAL_S = 10.0


def case_of(item: pytest.Item) -> object | None:
    """The case a test of the suites judges (its `case` parameter); None for a test that judges no case."""
    return item.callspec.params.get("case") if hasattr(item, "callspec") else None


class Progress:
    """A pytest plugin: registered for the run it shows."""

    def __init__(self, stream: TextIO, log_interval_s: float = LOG_INTERVAL_S) -> None:
        self.stream = stream
        self.shown = stream.isatty()
        self.log_interval_s = log_interval_s
        self.log_stream = None if self.shown else uncaptured(stream)
        self.finished = threading.Event()
        self.logger: threading.Thread | None = None  # writes the line into a log, once the run's cases are known
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
        if not self.shown and self.total:
            self.logger = threading.Thread(target=self.log, name="lmconform-progress", daemon=True)
            self.logger.start()

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

    def line(self) -> str:
        found = f"{self.findings} finding{'' if self.findings == 1 else 's'}"
        return f"[{self.done}/{self.total} cases] {found} · {self.current or 'starting'}"

    def draw(self) -> None:
        if not self.shown:
            return
        width = shutil.get_terminal_size().columns - 1
        self.stream.write("\r" + self.line()[:width].ljust(width))
        self.stream.flush()

    def log(self) -> None:
        """The line, whole, every log_interval_s seconds until the run is over (in a thread of its own: a case that
        takes minutes shows the line as often as any)."""
        assert self.log_stream is not None
        try:
            while not self.finished.wait(self.log_interval_s):
                self.log_stream.write(f"lmconform check: {self.line()}\n")
                self.log_stream.flush()
        except OSError:  # the reader went away (`lmconform check | head`): the run goes on, its log unread
            return

    def finish(self) -> None:
        """Stop writing into the log, or clear the terminal's line, so what follows starts on a clean one."""
        self.finished.set()
        if self.logger is not None:
            self.logger.join()
        if self.log_stream is not None and self.log_stream is not self.stream:
            with contextlib.suppress(OSError):  # what a reader that went away left unwritten
                self.log_stream.close()
        if self.shown and self.total:
            self.stream.write("\r" + " " * (shutil.get_terminal_size().columns - 1) + "\r")
            self.stream.flush()


def uncaptured(stream: TextIO) -> TextIO:
    """Where the log's line goes: while a test runs, pytest points descriptors 1 and 2 at a file of its own, and a
    line written then from another thread went there and never reached the log. A copy of the stream's descriptor,
    made before pytest captures anything, still reaches it; a stream without one (a StringIO) is itself."""
    try:
        descriptor = os.dup(stream.fileno())
    except (AttributeError, OSError, io.UnsupportedOperation):
        return stream
    return open(descriptor, "w", encoding=getattr(stream, "encoding", None) or "utf-8", errors="replace")
