"""The pytest plugin: target options, case x check parameterisation, verdicts as test outcomes, results record.

Loaded through the `pytest11` entry point, so `pytest suites --endpoint URL` works wherever lmconform is installed.
Its session fixtures start nothing unless a suite test asks for them: the project's own tests run beside it.

Everything written at the end (the results record, the HTML report, the step summary) is built from the record,
which the controlling process assembles from the test reports: under pytest-xdist the workers' verdicts and the
exchanges behind their findings reach it that way, so the files are the same with one process or several.
pytest-html, when asked for with --html, writes its own page of pytest's tests; lmconform only keeps secrets out of
the environment table it shares with pytest's header (pytest-metadata's).
"""

from __future__ import annotations

import os
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pytest_metadata.plugin import metadata_key

from lmconform.cases import CaseError, unmatched_case_patterns
from lmconform.checks.registry import unmatched_patterns
from lmconform.exit_status import UNREACHABLE, USAGE_ERROR
from lmconform.files import json_file_bytes, write_bytes_atomically
from lmconform.options import (
    add_options,
    settings_from_options,
    target_from_options,
    upstream_from_options,
    usage_error,
)
from lmconform.run import Run, RunPlan, TargetUnreachable, discover, results_record
from lmconform.vocabulary import Outcome
from lmconform.wire.redact import FILTERED, redact_text

RUN_KEY = pytest.StashKey[Run | None]()
PLAN_KEY = pytest.StashKey[RunPlan]()
RECORDS_KEY = pytest.StashKey["VerdictRecords"]()
FAILURE_TEXT_KEY = pytest.StashKey[str]()
VERDICT_KEY = pytest.StashKey[dict]()  # the verdict's results-record row, carried to the test's reports
EXCHANGE_KEY = pytest.StashKey[str]()  # the exchange behind a finding, carried once per case and process
TIMING_KEY = pytest.StashKey["dict | None"]()  # when the case's answer arrived, carried once per case and process
EXCHANGES_SENT_KEY = pytest.StashKey[set]()  # the cases whose timing (and exchange) this process has carried
NOTHING_TO_JUDGE_KEY = pytest.StashKey[bool]()
# Names of environment variables and metadata entries whose values are credentials ("author" is a name).
SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth(?!or)|credential|cookie|signature|private", re.IGNORECASE)
SHORTEST_SECRET = 8  # shorter values of secret-named variables ("1", "true") would blank out ordinary words
URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lmconform_cases(api): parameterize over the cases of one API and their checks")
    unknown = list(unmatched_patterns(config.getoption("checks") + config.getoption("exclude_checks")))
    if unknown:
        usage_error(f"no check id matches {', '.join(map(repr, unknown))}; `pytest suites --collect-only -q` lists them")
    try:  # the cases are read when the suite is collected, or here first when --cases names some
        unnamed = list(unmatched_case_patterns(config.getoption("cases"))) if config.getoption("cases") else []
    except CaseError as error:
        usage_error(f"bad case file: {error}")
    if unnamed:
        usage_error(f"no case matches {', '.join(map(repr, unnamed))}; `pytest suites --collect-only -q` lists them")
    target, settings = target_from_options(config), settings_from_options(config)
    expectations = None
    if config.getoption("expect"):
        from lmconform.expectations import ExpectationError, load_expectations

        try:
            expectations = load_expectations(Path(config.getoption("expect")))
        except ExpectationError as error:
            usage_error(str(error))
    config.stash[PLAN_KEY] = RunPlan(target, upstream_from_options(config, target, settings),
                                     tuple(config.getoption("checks")), tuple(config.getoption("exclude_checks")),
                                     expectations, faults=tuple(config.getoption("reference_fault")),
                                     bridge_faults=tuple(config.getoption("bridge_fault")), settings=settings,
                                     cases=tuple(config.getoption("cases")) or None)
    config.stash[RUN_KEY] = None
    config.stash[EXCHANGES_SENT_KEY] = set()
    config.stash[RECORDS_KEY] = records = VerdictRecords(config)
    config.pluginmanager.register(records, "lmconform-verdict-records")


def strict(config: pytest.Config) -> bool:
    """pytest's own `--strict` (strictness of markers and config) also makes SHOULD findings fail."""
    return bool(config.getini("strict"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("lmconform_cases")
    if marker is None:
        return
    try:
        pairs = metafunc.config.stash[PLAN_KEY].pairs(marker.args[0])
    except CaseError as error:
        usage_error(f"bad case file: {error}")
    metafunc.parametrize(("case", "check"), pairs, ids=[f"{case.slug}:{check.id}" for case, check in pairs])


def verdict_record(report: pytest.TestReport) -> dict | None:
    """The results-record row of the verdict a test report carries, if it judged a (case, check) pair."""
    return getattr(report, "lmconform_verdict", None)


def nothing_to_judge(report: pytest.TestReport) -> bool:
    """Whether the test's check applied to its case but found nothing to judge in the answer."""
    return getattr(report, "lmconform_nothing_to_judge", False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failing verdict is reported as its own text, so JUnit's message starts with `[check.id] title`
    rather than pytest's "Failed: " prefix; the call's report carries the verdict for the reports."""
    report = yield
    text = item.stash.get(FAILURE_TEXT_KEY, None)
    if report.when == "call" and report.failed and text:
        report.longrepr = text
    if report.when == "call":
        report.lmconform_verdict = item.stash.get(VERDICT_KEY, None)
        report.lmconform_exchange = item.stash.get(EXCHANGE_KEY, None)
        report.lmconform_timing = item.stash.get(TIMING_KEY, None)
        report.lmconform_nothing_to_judge = item.stash.get(NOTHING_TO_JUDGE_KEY, False)
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """Show NON-STRICT and INFO verdicts as what they are, not as a plain pass."""
    record = verdict_record(report)
    if report.when == "call" and report.passed and record:
        if record["outcome"] == Outcome.NON_STRICT:
            return "non-strict", "N", "NON-STRICT"
        if record["outcome"] == Outcome.INFO:
            return "info", "I", "INFO"
    return None


class VerdictRecords:
    """The verdicts a session's tests reported, in whichever process judged them: under pytest-xdist the workers'
    reports reach the controlling process through `pytest_runtest_logreport`, so the results record and the
    summary are written once, there, with exactly the rows of a run in one process."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rows: list[dict] = []
        self.started = datetime.now(UTC)
        self.clock = time.monotonic()
        self.worker_target: dict | None = None
        self.exchanges: dict[str, str] = {}  # case id -> the exchange behind its findings, from whichever process
        self.nothing_to_judge = 0  # (case, check) pairs whose check found nothing to judge in the answer
        self.timings: dict[str, dict] = {}  # case id -> when its answer arrived, from whichever process

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = verdict_record(report)
        if report.when == "call" and record is not None:
            self.rows.append(record)
            exchange = getattr(report, "lmconform_exchange", None)
            if exchange is not None:
                self.exchanges.setdefault(record["case"], exchange)
            timing = getattr(report, "lmconform_timing", None)
            if timing is not None:
                self.timings.setdefault(record["case"], timing)
        self.nothing_to_judge += report.when == "call" and nothing_to_judge(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Keep secrets out of pytest-metadata's table before anything shows it; with pytest-xdist, end the run
        here, with exit status 3, when the target cannot be reached: before any worker starts, since a worker that
        exits looks like a crash."""
        self.filter_environment()
        target = self.config.stash[PLAN_KEY].target
        if self.config.pluginmanager.getplugin("dsession") is not None and target.base_url:
            try:
                discover(target)
            except TargetUnreachable as error:
                pytest.exit(f"lmconform: {error}. Is the server running? (--endpoint {target.base_url})",
                            returncode=UNREACHABLE)

    def filter_environment(self) -> None:
        """pytest's header and pytest-html show pytest-metadata's table, which copies CI variables and `--metadata`
        values: secret-named entries go, and the API key, secret-named variables' values and URL credentials are
        blanked out wherever they appear."""
        metadata = self.config.stash.get(metadata_key, None)
        if metadata is None:
            return
        plan = self.config.stash[PLAN_KEY]
        secrets = (*plan.target.secrets, *(plan.upstream.secrets if plan.upstream else ()),
                   os.environ.get("LMCONFORM_API_KEY", ""),
                   *(value for name, value in os.environ.items()
                     if SECRET_NAME.search(name) and len(value) >= SHORTEST_SECRET))
        filtered = without_secrets(metadata, tuple(secret for secret in secrets if secret))
        metadata.clear()  # in place: pytest-html holds this very dict
        metadata.update(filtered)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """A pytest-xdist worker ended: keep the target it found, for the results record."""
        target = getattr(node, "workeroutput", {}).get("lmconform_target")
        if target is not None and self.worker_target is None:
            self.worker_target = target

    def target(self) -> dict | None:
        """The target as this process found it, or as the first pytest-xdist worker reported it."""
        run = self.config.stash.get(RUN_KEY, None)
        return run.target.header_record() if run is not None else self.worker_target

    def record(self) -> dict | None:
        """The results record of the verdicts reported so far; None when no suite test ran."""
        target = self.target()
        if target is None:
            return None
        return results_record(target, self.started, time.monotonic() - self.clock, self.rows, self.exchanges,
                              self.nothing_to_judge, self.timings)


def without_secrets(value, secrets: tuple[str, ...]):
    if isinstance(value, dict):
        return {name: without_secrets(item, secrets) for name, item in value.items()
                if not SECRET_NAME.search(str(name))}
    if isinstance(value, str):
        return URL_USERINFO.sub(f"{FILTERED}@", redact_text(value, secrets))
    return value


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    """The headline (will it work, per client and per surface) as a short table, then the count of verdicts."""
    verdicts = config.stash[RECORDS_KEY]
    record = verdicts.record()
    if record is None:
        return
    from lmconform.report.headline import headline_text
    from lmconform.report.target_prose import describe
    from lmconform.verdicts.headline import build_headline
    from lmconform.verdicts.records import results_of

    results = results_of(record)
    records = verdicts.rows
    counts = {outcome: sum(row["outcome"] == outcome for row in records) for outcome in Outcome}
    terminalreporter.section("lmconform: will it work?")
    terminalreporter.write_line(describe(results.target).sentence)
    for line in headline_text(build_headline(results.results), terminalreporter._tw.fullwidth):
        terminalreporter.write_line(line)
    bridge = record["target"].get("bridge")
    if bridge:
        terminalreporter.write_line(f"bridge: {bridge['command']} model={bridge['model']} profile={bridge['profile']}")
    terminalreporter.write_line("verdicts: " + ", ".join(f"{counts[outcome]} {outcome}" for outcome in Outcome)
                                + (f"; {verdicts.nothing_to_judge} case and check pairs had nothing to judge "
                                   "(pytest counts them as skipped)" if verdicts.nothing_to_judge else ""))
    if not strict(config):
        for row in records:
            if row["outcome"] == Outcome.NON_STRICT:
                terminalreporter.write_line(f"NON-STRICT {row['case']}: {row['message'].splitlines()[0]}")


def leave(session: pytest.Session, path: str, data: bytes) -> None:
    """Write a file the run leaves behind, atomically; a place that cannot be written is one line and exit status
    2, the verdicts on the terminal kept."""
    try:
        write_bytes_atomically(Path(path), data)
    except OSError as error:
        where = f" ({error.filename})" if error.filename and str(error.filename) != str(path) else ""
        line = f"lmconform: cannot write {path}: {error.strerror or error}{where}"
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            print(line, file=sys.stderr)
        else:
            if terminal._tw.width_of_current_line:  # the progress line of -q is still open
                terminal._tw.line()
            terminal.write_line(line, red=True)
        session.exitstatus = USAGE_ERROR


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    run = config.stash.get(RUN_KEY, None)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controlling process writes the files
        if run is not None:
            config.workeroutput["lmconform_target"] = run.target.header_record()  # type: ignore[attr-defined]
        return
    record = config.stash[RECORDS_KEY].record()
    if record is None:
        return
    if config.getoption("results_json", None):
        path = config.getoption("results_json")
        leave(session, path, json_file_bytes(Path(path), record))
    if config.getoption("report", None):
        from lmconform.report.run_page import run_page
        from lmconform.verdicts.records import results_of

        leave(session, config.getoption("report"), run_page(results_of(record)).encode("utf-8"))
    from lmconform.report.step_summary import append_step_summary

    append_step_summary(record)
