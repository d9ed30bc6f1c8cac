"""The matrix: several runs' results records merged into one page of checks x targets.

This is where an implementer stands, at a glance: one row per check (grouped by surface), one column per target,
each cell the worst outcome of that check over the run's cases, linked to the failing cases further down the page
with their Expected/Actual lines and a curl that reproduces them.

It reads only results records (INTERFACES.md), never the check registry, so it renders records written by other
versions of the suite. Every string it takes from a file is escaped: a model's answer may hold markup.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

from lmconform.exit_status import USAGE_ERROR
from lmconform.vocabulary import OUTCOME_STYLES, WORST_FIRST, Outcome, outcome_css

# Worst first: a cell shows the first of these among its cases.
OUTCOMES = {str(outcome): OUTCOME_STYLES[outcome] for outcome in WORST_FIRST}
RANK = {outcome: rank for rank, outcome in enumerate(OUTCOMES)}


def css_class(outcome: str) -> str:
    return Outcome(outcome).css_class


# The surfaces in the order HOUSE_STYLE.md lists them; a surface it does not list follows, alphabetically.
SURFACE_ORDER = ("http", "sse", "chat", "responses", "models", "errors", "generation",
                 "client.void", "client.openai_python", "vscodelm")

MESSAGE_LINES = 8  # the level line and the first two failures: Expected, Actual and the offending event
LINE_CHARS = 400  # an Event line can carry a whole body excerpt; the curl reproduces it in full
NOT_RUN = "not run"
NOT_RUN_MEANING = "no case of the run exercised the check"


class MatrixError(Exception):
    """A results file that cannot be read as a results record, or an output that cannot be written."""


@dataclass(frozen=True)
class CaseResult:
    """One row of a results record: the verdict of one check on one case."""

    case: str
    check: str
    level: str
    outcome: str
    title: str = ""
    message: str = ""
    curl: str = ""


@dataclass(frozen=True)
class RunTarget:
    url: str
    label: str
    model: str = ""
    server_version: str = ""
    started: str = ""


@dataclass(frozen=True)
class RunResults:
    source: Path
    target: RunTarget
    results: tuple[CaseResult, ...]


@dataclass(frozen=True)
class Column:
    name: str  # the label, its server version, and what tells it apart from a column with the same label
    anchor: str
    run: RunResults


@dataclass(frozen=True)
class Row:
    check: str
    surface: str
    level: str
    title: str
    anchor: str


@dataclass
class Cell:
    """The outcomes of one check over one run's cases."""

    counts: Counter = field(default_factory=Counter)
    not_passed: list[CaseResult] = field(default_factory=list)

    def add(self, result: CaseResult) -> None:
        self.counts[result.outcome] += 1
        if result.outcome != "OK":
            self.not_passed.append(result)

    @property
    def outcome(self) -> str:
        return min(self.counts, key=RANK.__getitem__)

    @property
    def not_passed_cases(self) -> list[str]:
        return [result.case for result in self.not_passed]

    def summary(self) -> str:
        """`FAILED 1, OK 8 of 9 cases`, worst first."""
        parts = [f"{outcome} {self.counts[outcome]}" for outcome in OUTCOMES if self.counts[outcome]]
        total = sum(self.counts.values())
        return f"{', '.join(parts)} of {total} case{'s' if total != 1 else ''}"


@dataclass(frozen=True)
class Matrix:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    cells: dict[tuple[str, str], Cell]  # (column anchor, check id) -> cell; absent where the check did not run

    def cell(self, column: Column, row: Row) -> Cell | None:
        return self.cells.get((column.anchor, row.check))

    def surfaces(self) -> list[tuple[str, list[Row]]]:
        return [(surface, list(rows)) for surface, rows in groupby(self.rows, key=lambda row: row.surface)]

    def column_counts(self, column: Column) -> Counter:
        """How many checks the column shows with each outcome, and how many did not run."""
        counts = Counter()
        for row in self.rows:
            cell = self.cell(column, row)
            counts[cell.outcome if cell else NOT_RUN] += 1
        return counts


# --- loading ----------------------------------------------------------------------------------------------------------

def load_results(paths: list[Path | str]) -> list[RunResults]:
    """Each file read and checked as a results record; the first bad one raises a MatrixError naming it."""
    return [load_run(Path(path)) for path in paths]


def load_run(path: Path) -> RunResults:
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise MatrixError(f"{path}: no such file") from None
    except OSError as error:
        raise MatrixError(f"{path}: cannot read: {error.strerror or error}") from None
    except ValueError as error:
        raise MatrixError(f"{path}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise MatrixError(f"{path}: not a results record: the top level is not an object")
    target = field_of(document, "target", dict, path, "the record")
    rows = field_of(document, "results", list, path, "the record")
    return RunResults(
        source=path,
        target=RunTarget(
            url=text_field(target, "url", path, "target"),
            label=text_field(target, "label", path, "target"),
            model=text_field(target, "model", path, "target", required=False),
            server_version=text_field(target, "server_version", path, "target", required=False),
            started=text_field(document, "started", path, "the record", required=False),
        ),
        results=tuple(case_result(row, path, f"results[{index}]") for index, row in enumerate(rows)),
    )


def case_result(row: object, path: Path, where: str) -> CaseResult:
    if not isinstance(row, dict):
        raise MatrixError(f"{path}: {where} is not an object")
    outcome = text_field(row, "outcome", path, where)
    if outcome not in OUTCOMES:
        raise MatrixError(f"{path}: {where}.outcome {outcome!r:.60} is not one of {', '.join(OUTCOMES)}")
    return CaseResult(
        case=text_field(row, "case", path, where),
        check=text_field(row, "check", path, where),
        level=text_field(row, "level", path, where),
        outcome=outcome,
        title=text_field(row, "title", path, where, required=False),
        message=text_field(row, "message", path, where, required=False),
        curl=text_field(row, "curl", path, where, required=False),
    )


def field_of(record: dict, key: str, kind: type, path: Path, where: str):
    if key not in record:
        raise MatrixError(f"{path}: {where} has no {key!r}")
    if not isinstance(record[key], kind):
        raise MatrixError(f"{path}: {where}: {key!r} is not {'an object' if kind is dict else 'a list'}")
    return record[key]


def text_field(record: dict, key: str, path: Path, where: str, required: bool = True) -> str:
    """A string field; an optional one may be absent or null (a run that never learnt the server version)."""
    value = record.get(key)
    if value is None and not required:
        return ""
    if key not in record:
        raise MatrixError(f"{path}: {where} has no {key!r}")
    if not isinstance(value, str):
        raise MatrixError(f"{path}: {where}: {key!r} is not a string")
    return value


# --- building ---------------------------------------------------------------------------------------------------------

def build_matrix(runs: list[RunResults]) -> Matrix:
    columns = tuple(Column(name=name, anchor=f"t{number}", run=run)
                    for number, (name, run) in enumerate(zip(column_names(runs), runs), start=1))
    first_seen: dict[str, CaseResult] = {}
    cells: dict[tuple[str, str], Cell] = {}
    for column in columns:
        for result in column.run.results:
            first_seen.setdefault(result.check, result)
            cells.setdefault((column.anchor, result.check), Cell()).add(result)
    ordered = sorted(first_seen.values(), key=lambda result: (surface_rank(surface_of(result.check)), result.check))
    anchors = unique_anchors([result.check for result in ordered])
    rows = tuple(Row(check=result.check, surface=surface_of(result.check), level=result.level,
                     title=result.title or headline_title(result), anchor=anchor)
                 for result, anchor in zip(ordered, anchors))
    return Matrix(columns=columns, rows=rows, cells=cells)


def column_names(runs: list[RunResults]) -> list[str]:
    """Label and server version; runs that share both are told apart by URL, else file, else position."""
    names = [" ".join(filter(None, (run.target.label, run.target.server_version))) for run in runs]
    for name in set(names):
        same = [index for index, other in enumerate(names) if other == name]
        if len(same) > 1:
            for index, suffix in zip(same, distinguishing([runs[index] for index in same])):
                names[index] = f"{name} ({suffix})"
    return names


def distinguishing(runs: list[RunResults]) -> list[str]:
    for suffixes in ([run.target.url for run in runs], [run.source.name for run in runs],
                     [str(run.source) for run in runs]):
        if len(set(suffixes)) == len(suffixes):
            return suffixes
    return [f"#{position}" for position in range(1, len(runs) + 1)]


def surface_of(check_id: str) -> str:
    """The first part of the id; `client.void` and `client.openai_python` are surfaces of their own."""
    head, _, rest = check_id.partition(".")
    return f"{head}.{rest.partition('.')[0]}" if head == "client" else head


def surface_rank(surface: str) -> tuple[int, str]:
    known = surface in SURFACE_ORDER
    return (SURFACE_ORDER.index(surface) if known else len(SURFACE_ORDER), "" if known else surface)


def headline_title(result: CaseResult) -> str:
    """A record without `title` still states it on its message's first line: `[check.id] title`."""
    headline = result.message.partition("\n")[0]
    prefix = f"[{result.check}] "
    return headline[len(prefix):] if headline.startswith(prefix) else ""


def unique_anchors(check_ids: list[str]) -> list[str]:
    """Fragment-safe ids; check ids already are, but a results file may hold anything."""
    anchors: list[str] = []
    for check_id in check_ids:
        anchor = re.sub(r"[^A-Za-z0-9_.-]", "-", check_id) or "check"
        if anchor in anchors:
            anchor = f"{anchor}-{len(anchors) + 1}"
        anchors.append(anchor)
    return anchors


def detail_anchor(column: Column, row: Row) -> str:
    return f"{column.anchor}-{row.anchor}"


def message_excerpt(result: CaseResult) -> list[str]:
    """The first lines of the message, without the two the page already shows in full: the headline
    `[check.id] title` (the detail's heading) and `Reproduce: curl …` (the curl below it)."""
    lines = [line for line in result.message.splitlines()
             if not line.startswith((f"[{result.check}] ", "Reproduce: "))]
    shown = [line if len(line) <= LINE_CHARS else f"{line[:LINE_CHARS]}…" for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        shown.append(f"… {len(lines) - MESSAGE_LINES} more lines")
    return shown


def target_facts(column: Column) -> list[tuple[str, str]]:
    target = column.run.target
    return [("version", target.server_version or "unknown"), ("model", target.model or "unknown"),
            ("url", target.url), ("started", target.started or "unknown")]


def counts_text(counts: Counter) -> list[str]:
    """`✗ 4 FAILED · ✓ 40 OK · 3 not run`, worst first like the legend."""
    parts = [f"{OUTCOMES[outcome].symbol} {counts[outcome]} {outcome}" for outcome in OUTCOMES
             if counts[outcome]]
    return parts + ([f"{counts[NOT_RUN]} {NOT_RUN}"] if counts[NOT_RUN] else [])


# --- HTML -------------------------------------------------------------------------------------------------------------

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em; color: #1d1d1d; }
h1 { margin-bottom: .2em; }
table.matrix { border-collapse: collapse; margin: 1em 0 2em; }
.matrix th, .matrix td { border: 1px solid #c8c8c8; padding: .3em .55em; vertical-align: top; }
.matrix thead th { background: #f4f4f4; text-align: left; font-weight: normal; min-width: 9em; }
.matrix thead .name { font-weight: bold; }
.matrix thead .fact, .matrix thead .counts { font-size: .85em; color: #444; overflow-wrap: anywhere; }
.matrix tr.surface th { background: #e2e2e2; text-align: left; font-size: 1.05em; }
.matrix th[scope=row] { text-align: left; font-weight: normal; }
.matrix th[scope=row] .title { color: #444; }
.level { font-size: .75em; font-weight: bold; border: 1px solid #888; border-radius: 3px; padding: 0 .3em; }
td.cell { text-align: center; white-space: nowrap; font-size: 1.15em; }
td.cell a { color: inherit; text-decoration: none; display: block; }
.badge { display: inline-block; min-width: 1.4em; text-align: center; padding: 0 .35em; border-radius: 3px; }
""" + outcome_css("") + """
.not-run { background: #ffffff; }
.legend { list-style: none; padding: 0; }
.legend li { margin: .15em 0; }
.detail { border-top: 1px solid #ddd; padding-top: .4em; margin-top: 1em; }
.case { margin: .6em 0 .6em 1em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; border: 1px solid #ddd;
      padding: .5em; margin: .3em 0; font-size: .9em; }
pre.curl { background: #f2f5f9; }
"""


def render_html(matrix: Matrix) -> str:
    """One self-contained page: inline CSS, no script, no external resource."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>lmconform conformance matrix</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
        "<h1>lmconform conformance matrix</h1>",
        f"<p>{len(matrix.rows)} checks &times; {len(matrix.columns)} targets. A cell shows the worst outcome of "
        "the check over the target's cases; a cell that is not OK links to its cases below.</p>",
        html_legend(),
        '<table class="matrix" id="matrix">',
        html_header(matrix),
    ]
    for surface, rows in matrix.surfaces():
        parts.append("<tbody>")
        parts.append(f'<tr class="surface"><th colspan="{len(matrix.columns) + 1}">{e(surface)}</th></tr>')
        for row in rows:
            parts.append(f'<tr id="check-{e(row.anchor)}"><th scope="row">{html_check(row)}</th>')
            parts.extend(html_cell(column, row, matrix.cell(column, row)) for column in matrix.columns)
            parts.append("</tr>")
        parts.append("</tbody>")
    parts.append("</table>")
    parts.extend(html_details(matrix))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def html_legend() -> str:
    items = [f'<li><span class="badge {css_class(outcome)}">{style.symbol}</span> <b>{outcome}</b>: '
             f"{style.meaning}</li>" for outcome, style in OUTCOMES.items()]
    items.append(f'<li><span class="badge not-run">&nbsp;</span> <b>blank</b>: {NOT_RUN}, {NOT_RUN_MEANING}</li>')
    return '<h2>Legend</h2>\n<ul class="legend">\n' + "\n".join(items) + "\n</ul>"


def html_header(matrix: Matrix) -> str:
    e = html.escape
    cells = ['<th scope="col">Check</th>']
    for column in matrix.columns:
        facts = "".join(f'<div class="fact">{name} {e(value)}</div>' for name, value in target_facts(column))
        counts = " · ".join(e(part) for part in counts_text(matrix.column_counts(column)))
        cells.append(f'<th scope="col" id="target-{column.anchor}"><div class="name">{e(column.name)}</div>'
                     f'{facts}<div class="counts">checks: {counts}</div></th>')
    return "<thead><tr>" + "".join(cells) + "</tr></thead>"


def html_check(row: Row) -> str:
    e = html.escape
    return (f'<span class="level">{e(row.level)}</span> <code>{e(row.check)}</code>'
            f'<div class="title">{e(row.title)}</div>')


def html_cell(column: Column, row: Row, cell: Cell | None) -> str:
    e = html.escape
    if cell is None:
        return f'<td class="cell not-run" title="{e(column.name)}: {NOT_RUN}"></td>'
    style = OUTCOMES[cell.outcome]
    tooltip = e(f"{column.name}: {row.check}: {cell.outcome} ({cell.summary()})")
    symbol = style.symbol
    if cell.outcome != "OK":
        symbol = f'<a href="#{e(detail_anchor(column, row))}">{symbol}</a>'
    return f'<td class="cell {css_class(cell.outcome)}" title="{tooltip}">{symbol}</td>'


def html_details(matrix: Matrix) -> list[str]:
    e = html.escape
    parts = ['<h2 id="details">Details</h2>',
             "<p>Per target, every check that is not OK: the cases that did not pass, the first lines of their "
             "message, and a curl that reproduces each.</p>"]
    for column in matrix.columns:
        shown = [(row, cell) for row in matrix.rows
                 if (cell := matrix.cell(column, row)) is not None and cell.not_passed]
        if not shown:
            continue
        parts.append(f"<h3>{e(column.name)}</h3>")
        for row, cell in shown:
            style = OUTCOMES[cell.outcome]
            parts.append(f'<section class="detail" id="{e(detail_anchor(column, row))}">')
            parts.append(f'<h4><span class="badge {css_class(cell.outcome)}">{style.symbol} {cell.outcome}</span> '
                         f"<code>{e(row.check)}</code> {e(row.title)}</h4>")
            parts.append(f"<p>{e(column.name)} · {e(row.level)} · {e(cell.summary())} · "
                         f'<a href="#check-{e(row.anchor)}">back to the matrix</a></p>')
            for result in cell.not_passed:
                case_style = OUTCOMES[result.outcome]
                parts.append(f'<div class="case"><div><span class="badge {css_class(result.outcome)}">'
                             f"{case_style.symbol} {result.outcome}</span> <code>{e(result.case)}</code></div>")
                parts.append(f'<pre class="message">{e(chr(10).join(message_excerpt(result)))}</pre>')
                if result.curl:
                    parts.append(f'<pre class="curl">{e(result.curl)}</pre>')
                parts.append("</div>")
            parts.append("</section>")
    return parts


# --- Markdown ---------------------------------------------------------------------------------------------------------

MARKDOWN_ACTIVE = re.compile(r"([\\`*_~\[\]|])")


def md(text: str) -> str:
    """Text from a results file made inert in GitHub Markdown: HTML escaped, markup and `|` backslashed, and
    newlines turned into `<br>` so a table cell stays on its line."""
    lines = (MARKDOWN_ACTIVE.sub(r"\\\1", html.escape(line, quote=False)) for line in text.splitlines() or [""])
    return "<br>".join(lines)


def render_markdown(matrix: Matrix) -> str:
    legend = " · ".join(f"{style.symbol} {outcome}: {style.meaning}" for outcome, style in OUTCOMES.items())
    lines = ["# lmconform conformance matrix", "", f"Legend: {legend} · blank: {NOT_RUN}", "",
             "| Target | Version | Model | URL | Checks |", "| --- | --- | --- | --- | --- |"]
    for column in matrix.columns:
        facts = dict(target_facts(column))
        counts = " · ".join(counts_text(matrix.column_counts(column)))
        lines.append(f"| {md(column.name)} | {md(facts['version'])} | {md(facts['model'])} | {md(facts['url'])} "
                     f"| {counts} |")
    lines += ["", "| Check | Level | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
              "| --- | --- | " + " | ".join(":---:" for _ in matrix.columns) + " |"]
    for surface, rows in matrix.surfaces():
        lines.append(f"| **{md(surface)}** | |" + " |" * len(matrix.columns))
        for row in rows:
            cells = [markdown_cell(column, row, matrix.cell(column, row)) for column in matrix.columns]
            lines.append(f"| {md(row.check)}<br>{md(row.title)} | {md(row.level)} | " + " | ".join(cells) + " |")
    lines += ["", "## Details"]
    for column in matrix.columns:
        for row in matrix.rows:
            cell = matrix.cell(column, row)
            if cell is None or not cell.not_passed:
                continue
            symbol = OUTCOMES[cell.outcome].symbol
            lines += ["", f'<a id="{detail_anchor(column, row)}"></a>',
                      f"### {symbol} {cell.outcome} · {md(column.name)} · {md(row.check)}", "",
                      f"{md(row.title)} ({md(row.level)}; {md(cell.summary())})", ""]
            lines += [f"- {OUTCOMES[result.outcome].symbol} {result.outcome} {md(result.case)}<br>"
                      + md("\n".join(message_excerpt(result))) for result in cell.not_passed]
    return "\n".join(lines) + "\n"


def markdown_cell(column: Column, row: Row, cell: Cell | None) -> str:
    if cell is None:
        return ""
    symbol = OUTCOMES[cell.outcome].symbol
    return symbol if cell.outcome == "OK" else f"[{symbol}](#{detail_anchor(column, row)})"


# --- command line -----------------------------------------------------------------------------------------------------

def register(subparsers) -> argparse.ArgumentParser:
    """Add `matrix` to an argparse subparsers object; the handler is in the parser's defaults as `handler`."""
    parser = subparsers.add_parser(
        "matrix", help="merge results records into one page of checks x targets",
        description="Merge the results records of several runs (--results-json) into one HTML page of "
                    "checks x targets, with the failing cases of each target below it.")
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json", help="a run's results record")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="PATH", help="the HTML page to write")
    parser.add_argument("--markdown", type=Path, metavar="PATH",
                        help="also write the matrix as a GitHub-flavoured Markdown table")
    parser.set_defaults(handler=run_matrix)
    return parser


def run_matrix(args: argparse.Namespace) -> int:
    try:
        matrix = build_matrix(load_results(args.results))
        write_text(args.output, render_html(matrix))
        if args.markdown:
            write_text(args.markdown, render_markdown(matrix))
    except MatrixError as error:
        print(f"lmconform matrix: {error}", file=sys.stderr)
        return USAGE_ERROR
    return 0


def write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise MatrixError(f"{path}: cannot write: {error.strerror or error}") from None
