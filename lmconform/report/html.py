"""The HTML report of one run (`pytest suites --html PATH`): pytest-html's page with lmconform's report first.

lmconform's sections (run_page.py: will it work, the target, the findings by check, every verdict, the exchanges)
open the page; pytest's own table follows, with lmconform's outcome beside pytest's, and the environment table
comes last. pytest's table leaves out two kinds of test, as pytest-html lets a plugin do by emptying a row:
- a verdict that is OK: "Every verdict" lists it (under its ✓ OK box), and a table that renders each of its rows
  in the browser on every click is unusable with thousands of them (a report of 10,000 verdicts must stay usable);
- a (case, check) pair that had nothing to judge in the answer: it is not a verdict at all, so the results record
  has no row for it and neither has this page. pytest counts it as skipped, since the answer, not collection,
  decides it; the page and the terminal say how many there were.

pytest-html inserts every fragment given to it as HTML (cells, logs, environment values, the summary), so each
string placed in one here is escaped: model output, headers and error bodies are the endpoint's.
"""

from __future__ import annotations

import html
import json
import os
import re

import pytest
from pytest_html import extras
from pytest_metadata.plugin import metadata_key

from lmconform.plugin import PLAN_KEY, RECORDS_KEY, RUN_KEY, nothing_to_judge, verdict_record
from lmconform.report.findings_html import case_anchor
from lmconform.report.records import RunResults, results_of
from lmconform.report.run_page import cases_to_show, run_page
from lmconform.report.target_prose import describe
from lmconform.target import Target
from lmconform.vocabulary import Outcome, outcome_css
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpExchange
from lmconform.wire.redact import FILTERED, redact_headers, redact_text
from lmconform.wire.stdio import StdioExchange

# A streamed answer can run to megabytes, and a self-contained report carries one copy per case with a finding.
EXCHANGE_BODY_CAP = 64 * 1024
# (name, header): the name is the cell's `col-<name>` class, which pytest-html's sorting reads as `\w+`.
COLUMNS = (("outcome", "lmconform"),)
FIRST_COLUMN = 2  # after pytest-html's Result and Test
# Names of environment variables and metadata entries whose values are credentials ("author" is a name).
SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth(?!or)|credential|cookie|signature|private", re.IGNORECASE)
SHORTEST_SECRET = 8  # shorter values of secret-named variables ("1", "true") would blank out ordinary words
URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")

# pytest-html lays out title, environment, summary and table in that order; lmconform's report comes right after
# the title, pytest's table after it, and the environment (which the target block says in words) last.
STYLE = outcome_css("td.col-outcome") + """
td.col-outcome { font-weight: bold; white-space: nowrap; }
body { display: flex; flex-direction: column; }
body > * { align-self: stretch; }
#title, body > p { order: 0; }
.summary { order: 1; }
#results-table { order: 2; }
#environment-header { order: 3; }
#environment { order: 4; align-self: flex-start; }
footer { order: 5; }
.summary__data > h2:first-child { display: none; }
.lmc-pytest { color: #1d1d1d; font-size: 13px; }
.lmc-row { margin: .2em 0; font-size: 13px; }
.lmc-row a { color: #1a56a8; }
.logwrapper:not(:has(.log)) { display: none; }
"""


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        config.pluginmanager.register(HtmlReport(config), "lmconform-html-report")


class HtmlReport:
    """The hooks, bound to the config of the run they report on."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results: RunResults | None = None

    @property
    def target(self) -> Target:
        """The target as discovered (with its model) once the run has started; as given on the command line before."""
        run = self.config.stash.get(RUN_KEY, None)
        return run.target if run is not None else self.config.stash[PLAN_KEY].target

    def pytest_html_report_title(self, report) -> None:
        report.title = f"lmconform: {self.target.label}"  # the template escapes the title

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[FIRST_COLUMN:FIRST_COLUMN] = [f'<th class="sortable" data-column-type="{name}">{header}</th>'
                                            for name, header in COLUMNS]

    def pytest_html_results_table_row(self, report, cells: list[str]) -> None:
        record = verdict_record(report)
        if nothing_to_judge(report) or (record is not None and record["outcome"] == Outcome.OK):
            cells.clear()  # pytest-html leaves a row without cells out of the page and of its counts
            return
        outcome = Outcome(record["outcome"]) if record else None
        cell = (f'<td class="col-outcome {outcome.css_class}">{html.escape(outcome)}</td>' if outcome
                else '<td class="col-outcome"></td>')
        cells[FIRST_COLUMN:FIRST_COLUMN] = [cell]

    def pytest_html_results_table_html(self, report, data: list[str]) -> None:
        """A verdict's row says in one line what it found and links to the finding (the page tells the whole
        story there, once); a skip says its reason, not the (file, line, text) tuple pytest keeps it as."""
        record = verdict_record(report)
        if record is not None:
            data[:] = []
        elif report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
            data[:] = [html.escape(str(report.longrepr[2]).removeprefix("Skipped: "))]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self):
        report = yield
        record = verdict_record(report)
        if record is not None and record["outcome"] != Outcome.OK:
            e = html.escape
            line = e(record["message"].splitlines()[2] if record["outcome"] == Outcome.UNSUPPORTED else
                     f"[{record['check']}] {record['outcome']} on {record['case']}")
            anchor = "not-offered" if record["outcome"] == Outcome.UNSUPPORTED else \
                case_anchor(record["check"], record["case"])
            link = f'<a href="#{anchor}">{line}: the finding</a>'
            report.extras = [*getattr(report, "extras", []), extras.html(f'<p class="lmc-row">{link}</p>')]
        return report

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str], session) -> None:
        prefix.append(f"<style>{STYLE}</style>")
        verdicts = self.config.stash[RECORDS_KEY]
        if self.results is None:
            return
        # The exchanges are the process's own: under pytest-xdist the workers keep theirs, and the findings show
        # without them.
        run = self.config.stash.get(RUN_KEY, None)
        observed = run.observations() if run is not None else {}
        exchanges = {case: exchange_text(observed[case].exchange, observed[case].target.secrets)
                     for case in cases_to_show(self.results) if case in observed}
        prefix.append(run_page(self.results, exchanges, verdicts.nothing_to_judge))
        passed = sum(row.outcome == Outcome.OK for row in self.results.results)
        prefix.append('<h2 class="lmc-pytest">pytest\'s view</h2><p class="lmc-pytest">The tests of the run as pytest '
                      "saw them, with lmconform's outcome beside pytest's (a SHOULD finding passes unless --strict). "
                      f"Left out: the {passed} tests whose verdict is OK (in Every verdict, above) and the "
                      f"{verdicts.nothing_to_judge} that had nothing to judge; the counts below are of the others.</p>")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before the terminal header and pytest-html read pytest-metadata's table."""
        self._filter_environment()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The model and fingerprint are known only once the run has probed the target.

        pytest-html reads the environment table at session start and keeps pytest-metadata's dict itself, which it
        renders after this hook (its own runs last): entries added here reach the report.
        """
        record = self.config.stash[RECORDS_KEY].record()
        if record is not None:  # no suite test ran (the project's own tests, say): there is no target to describe
            self.results = results_of(record)
            prose = describe(self.results.target)
            entries = {"Target": prose.sentence, **dict(prose.facts)}
            if prose.evidence:
                entries["Fingerprint evidence"] = "; ".join(prose.evidence)
            self.config.stash[metadata_key].update({name: html.escape(text) for name, text in entries.items()})
        self._filter_environment()

    def _filter_environment(self) -> None:
        """pytest-metadata copies CI variables and `--metadata` values into the report: drop secret-named entries,
        and blank out the API key, secret-named variables' values and URL credentials wherever they appear."""
        metadata = self.config.stash[metadata_key]
        secrets = (*self.target.secrets, os.environ.get("LMCONFORM_API_KEY", ""),
                   *(value for name, value in os.environ.items()
                     if SECRET_NAME.search(name) and len(value) >= SHORTEST_SECRET))
        filtered = _without_secrets(metadata, tuple(secret for secret in secrets if secret))
        metadata.clear()  # in place: pytest-html holds this very dict
        metadata.update(filtered)


def _without_secrets(value, secrets: tuple[str, ...]):
    if isinstance(value, dict):
        return {name: _without_secrets(item, secrets) for name, item in value.items()
                if not SECRET_NAME.search(str(name))}
    if isinstance(value, str):
        return URL_USERINFO.sub(f"{FILTERED}@", redact_text(value, secrets))
    return value


def exchange_text(exchange: Exchange, secrets: tuple[str, ...]) -> str:
    """The request as sent and the answer as received: status, headers, and the body as text up to the cap; over
    stdio, the case's whole conversation with the process, line by line."""
    if isinstance(exchange, StdioExchange):
        return redact_text(exchange.process.transcript(EXCHANGE_BODY_CAP), secrets)
    assert isinstance(exchange, HttpExchange)
    request = exchange.request
    lines = [f"{request.method} {request.url}", *(f"{name}: {value}" for name, value in request.headers.items())]
    if request.body is not None:
        body = request.body if isinstance(request.body, str) else json.dumps(request.body, ensure_ascii=False, indent=2)
        lines += ["", body]
    lines += ["", f"HTTP {exchange.status}" if exchange.status is not None else "no answer"]
    lines += [f"{name}: {value}" for name, value in redact_headers(exchange.headers).items()]
    answer = exchange.body
    lines += ["", answer[:EXCHANGE_BODY_CAP].decode("utf-8", errors="replace")]
    if len(answer) > EXCHANGE_BODY_CAP:
        lines.append(f"[… {len(answer) - EXCHANGE_BODY_CAP} more bytes: the report shows the first "
                     f"{EXCHANGE_BODY_CAP} of {len(answer)}; the finding's curl fetches it all]")
    if exchange.truncated:
        lines.append(f"[the capture stopped reading at the {exchange.max_body_bytes} byte cap (--max-body-bytes)]")
    if exchange.error:
        lines.append(f"[{exchange.error}]")
    return redact_text("\n".join(lines), secrets)
