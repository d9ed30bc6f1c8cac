"""The HTML report of one run (`pytest suites --html PATH`): pytest-html, with lmconform's verdicts in it.

Its hooks add the Case, Check id, Level, Target and Outcome columns, a table of outcomes per surface at the top,
and under each finding its Expected/Actual, the offending events, the curl, the client verdicts on the same case
and the full exchange. They also name the target in the environment table and keep secrets out of that table.

pytest-html inserts every fragment given to it as HTML (cells, extras, environment values, the summary), so each
string placed in one here goes through `html.escape`: model output, headers and error bodies are the endpoint's.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections import Counter

import pytest
from pytest_html import extras
from pytest_metadata.plugin import metadata_key

from lmconform.checks.evaluate import Verdict
from lmconform.plugin import PLAN_KEY, RECORDS_KEY, RUN_KEY, verdict_record
from lmconform.report.matrix import OUTCOMES, css_class
from lmconform.target import Target
from lmconform.vocabulary import Outcome, outcome_css, surface_of, surface_rank
from lmconform.wire.http import HttpExchange
from lmconform.wire.redact import FILTERED, redact_headers, redact_text

# A streamed answer can run to megabytes, and a self-contained report carries one copy per finding.
EXCHANGE_BODY_CAP = 64 * 1024
# Findings: these rows open onto the whole story of the case. Other non-OK rows show their message only.
FINDINGS = {Outcome.FAILED, Outcome.NON_STRICT, Outcome.ERROR}
# (name, header): the name is the cell's `col-<name>` class, which pytest-html's sorting reads as `\w+`.
COLUMNS = (("case", "Case"), ("check", "Check id"), ("level", "Level"), ("target", "Target"),
           ("outcome", "Outcome"))
FIRST_COLUMN = 2  # after pytest-html's Result and Test
# Names of environment variables and metadata entries whose values are credentials ("author" is a name).
SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth(?!or)|credential|cookie|signature|private", re.IGNORECASE)
SHORTEST_SECRET = 8  # shorter values of secret-named variables ("1", "true") would blank out ordinary words
URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
ENVIRONMENT_NAMES = {"url": "Target URL", "label": "Target label", "model": "Model", "server_version": "Server version",
                     "profile": "Profile", "fingerprint": "Fingerprint"}

STYLE = """
.lmconform-summary { margin: .5em 0 1em; }
.lmconform-summary caption { text-align: left; font-weight: bold; padding-bottom: .3em; }
.lmconform-summary th, .lmconform-summary td { border: 1px solid #c8c8c8; padding: .2em .6em; }
.lmconform-summary thead th { background: #f4f4f4; }
.lmconform-summary th[scope=row] { text-align: left; font-weight: normal; }
.lmconform-summary td { text-align: right; min-width: 3.5em; }
.lmconform-summary td.none { color: #b0b0b0; background: none; }
""" + outcome_css(".lmconform-summary ") + "\n" + outcome_css("td.col-outcome") + """
td.col-outcome { font-weight: bold; white-space: nowrap; }
.lmconform-finding h4 { margin: .8em 0 .2em; }
.lmconform-finding pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7;
                         border: 1px solid #ddd; padding: .5em; margin: .2em 0; }
.lmconform-finding details pre { max-height: 40em; overflow: auto; }
.lmconform-finding summary { cursor: pointer; font-weight: bold; margin-top: .8em; }
.lmconform-clients td, .lmconform-clients th { text-align: left; vertical-align: top; padding: .1em .6em .1em 0; }
"""


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        config.pluginmanager.register(HtmlReport(config), "lmconform-html-report")


class HtmlReport:
    """The hooks, bound to the config of the run they report on."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

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
        values = dict.fromkeys((name for name, _ in COLUMNS), "")
        outcome_class = ""
        if record is not None:
            values.update(case=record["case"], check=record["check"], level=record["level"],
                          target=self.target.label, outcome=record["outcome"])
            outcome_class = f" {css_class(record['outcome'])}"
        cells[FIRST_COLUMN:FIRST_COLUMN] = [
            f'<td class="col-{name}{outcome_class if name == "outcome" else ""}">{html.escape(values[name])}</td>'
            for name, _ in COLUMNS
        ]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self):
        report = yield
        record = verdict_record(report)
        if report.when == "call" and record is not None and record["outcome"] != Outcome.OK:
            report.extras = [*getattr(report, "extras", []), extras.html(self._finding_html(record))]
        return report

    def _finding_html(self, record: dict) -> str:
        e = html.escape
        parts = ['<div class="lmconform-finding">', "<h4>Expected / Actual</h4>", f"<pre>{e(record['message'])}</pre>"]
        if record["outcome"] in FINDINGS:
            if record["evidence"]:
                parts += ["<h4>Offending events</h4>", f"<pre>{e(record['evidence'])}</pre>"]
            if record["curl"]:
                parts += ["<h4>Reproduce</h4>", f"<pre>{e(record['curl'])}</pre>"]
            run = self.config.stash[RUN_KEY]
            observed = run.observations()[record["case"]]
            parts += _clients_html(run.client_verdicts(observed.case))
            parts += [f"<details><summary>Full exchange of {e(record['case'])}</summary>",
                      f"<pre>{e(exchange_text(observed.exchange, observed.target.secrets))}</pre></details>"]
        parts.append("</div>")
        return "\n".join(parts)

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str], session) -> None:
        prefix.append(f"<style>{STYLE}</style>")
        verdicts = self.config.stash[RECORDS_KEY]
        if verdicts.target() is not None:
            prefix.append(summary_table(verdicts.rows, verdicts.target()))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before the terminal header and pytest-html read pytest-metadata's table."""
        self._filter_environment()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The model and fingerprint are known only once the run has probed the target.

        pytest-html reads the environment table at session start and keeps pytest-metadata's dict itself, which it
        renders after this hook (its own runs last): entries added here reach the report.
        """
        record = self.config.stash[RECORDS_KEY].target()
        if record is not None:  # no suite test ran (the project's own tests, say): there is no target to describe
            self.config.stash[metadata_key].update(
                {title: html.escape(_environment_value(record.get(name))) for name, title in ENVIRONMENT_NAMES.items()})
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


def _environment_value(value) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, dict):
        return ", ".join(f"{name}: {item}" for name, item in value.items())
    return str(value)


def _clients_html(verdicts: list[Verdict]) -> list[str]:
    if not verdicts:
        return []
    e = html.escape
    rows = []
    for verdict in verdicts:
        said = verdict.check.title if verdict.outcome is Outcome.OK else verdict.message
        rows.append(f'<tr><td><code>{e(verdict.check.id)}</code></td>'
                    f'<td class="col-outcome {css_class(verdict.outcome)}">{e(verdict.outcome)}</td>'
                    f"<td><pre>{e(said)}</pre></td></tr>")
    return ["<h4>What the clients say about this answer</h4>",
            '<table class="lmconform-clients">', *rows, "</table>"]


def exchange_text(exchange: HttpExchange, secrets: tuple[str, ...]) -> str:
    """The request as sent and the answer as received: status, headers, and the body as text up to the cap."""
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
                     f"{EXCHANGE_BODY_CAP} of {len(answer)}; the curl above fetches it all]")
    if exchange.truncated:
        lines.append(f"[the capture stopped reading at the {exchange.max_body_bytes} byte cap (--max-body-bytes)]")
    if exchange.error:
        lines.append(f"[{exchange.error}]")
    return redact_text("\n".join(lines), secrets)


def summary_table(rows: list[dict], target: dict) -> str:
    """Outcomes per surface, worst outcome first, surfaces in the order the matrix uses."""
    counts: dict[str, Counter] = {}
    for row in rows:
        counts.setdefault(surface_of(row["check"]), Counter())[row["outcome"]] += 1
    e = html.escape
    caption = f"lmconform verdicts on {target['label']} ({target['url']}), model {target['model'] or 'unknown'}"
    head = "".join(f'<th scope="col" class="{css_class(outcome)}">{OUTCOMES[outcome].symbol} {outcome}</th>'
                   for outcome in OUTCOMES)
    table_rows = []
    for surface in sorted(counts, key=surface_rank):
        cells = "".join(_count_cell(outcome, counts[surface][outcome]) for outcome in OUTCOMES)
        table_rows.append(f'<tr><th scope="row">{e(surface)}</th>{cells}<td>{sum(counts[surface].values())}</td></tr>')
    total = sum(counts.values(), Counter())
    cells = "".join(_count_cell(outcome, total[outcome]) for outcome in OUTCOMES)
    return (f'<table class="lmconform-summary"><caption>{e(caption)}</caption>'
            f'<thead><tr><th scope="col">Surface</th>{head}<th scope="col">Total</th></tr></thead>'
            f'<tbody>{"".join(table_rows)}</tbody>'
            f'<tfoot><tr><th scope="row">all</th>{cells}<td>{sum(total.values())}</td></tr></tfoot></table>')


def _count_cell(outcome: str, count: int) -> str:
    return f'<td class="{css_class(outcome) if count else "none"}">{count}</td>'
