"""The graded matrices of several runs: for each row a run graded (its results rows' `schema_keyword`, a JSON Schema
keyword family; `tool_type`, a Responses tool type beside `function`; `request_field`, a field a client sends;
`parameter`, an optional request parameter), what each target did with it over its repetitions, with the evidence in a
line; as Markdown and as HTML, for the matrix pages."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass

from lmconform.report.markdown import md
from lmconform.report.matrix import Matrix
from lmconform.verdicts.records import KeywordGrade


@dataclass(frozen=True)
class GradedMatrix:
    """One graded matrix: the results rows' key it reads, its section, the name of its rows, and its grades."""

    key: str  # the CaseResult attribute and results-record key: schema_keyword, tool_type, request_field, parameter
    section: str
    anchor: str
    row_name: str
    meanings: dict[str, str]  # each grade, in the order the legend lists them, and what it means
    symbols: dict[str, str]


SCHEMA_KEYWORDS = GradedMatrix(
    "schema_keyword", "Does it enforce my schema?", "schema-keywords", "Keyword",
    {"enforced": "every answer holds the keyword, though the prompt asks for one that breaks it",
     "refused": "the request is refused with a 4xx",
     "ignored": "the request is accepted and an answer breaks the keyword"},
    {"enforced": "✓", "refused": "⊘", "ignored": "✗"})
TOOL_TYPES = GradedMatrix(
    "tool_type", "Does it take Codex's tool types?", "tool-types", "Tool type",
    {"honoured": "a call of the tool comes back in its own item type; a hosted tool is accepted and echoed",
     "refused": "the request is refused with a 4xx (a limit: what it costs Codex is in the evidence)",
     "dropped": "a 200, and the tool can never be called, or its call comes back in the wrong item type"},
    {"honoured": "✓", "refused": "⊘", "dropped": "✗"})


def _honoured_refused_ignored(what: str) -> tuple[dict[str, str], dict[str, str]]:
    """The legend and symbols of a matrix of things a request sends one at a time (`what`: "the field")."""
    return ({"honoured": f"the request is accepted, and {what}'s effect shows where it has one",
             "refused": "the request is refused with a 4xx",
             "ignored": f"the request is accepted and {what}'s effect does not show"},
            {"honoured": "✓", "refused": "⊘", "ignored": "✗"})


REQUEST_FIELDS = GradedMatrix("request_field", "Does it take what Claude Code sends?", "request-fields", "Field",
                              *_honoured_refused_ignored("the field"))
PARAMETERS = GradedMatrix("parameter", "Which parameters does it honour?", "parameters", "Parameter",
                          *_honoured_refused_ignored("the parameter"))
MATRICES = (SCHEMA_KEYWORDS, TOOL_TYPES, REQUEST_FIELDS, PARAMETERS)


@dataclass(frozen=True)
class Graded:
    grade: str
    evidence: str
    case: str
    pass_k: str  # "held/sent" with --repeat, else ""
    symbol: str

    @property
    def text(self) -> str:
        return " ".join(filter(None, (self.symbol, self.grade, f"(pass^k {self.pass_k})" if self.pass_k else "")))


def graded_grid(matrix: Matrix, graded: GradedMatrix) -> list[tuple[str, dict[str, Graded]]]:
    """Each row graded in any column, in the order the runs' cases list them, with its grade by column anchor."""
    grid: dict[str, dict[str, Graded]] = {}
    for column in matrix.columns:
        for result in column.run.results:
            grade: KeywordGrade | None = getattr(result, graded.key)
            if grade is not None:
                grid.setdefault(grade.family, {})[column.anchor] = Graded(
                    grade.grade, grade.evidence, result.case, result.pass_k, graded.symbols.get(grade.grade, ""))
    return list(grid.items())


def _legend(graded: GradedMatrix) -> str:
    return " · ".join(f"{graded.symbols[grade]} {grade}: {meaning}" for grade, meaning in graded.meanings.items())


def graded_markdown(matrix: Matrix) -> list[str]:
    lines: list[str] = []
    for graded in MATRICES:
        grid = graded_grid(matrix, graded)
        if not grid:
            continue
        lines += ["", f'<a id="{graded.anchor}"></a>', f"## {graded.section}", "", md(_legend(graded)), "",
                  f"| {graded.row_name} | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
                  "| --- |" + " --- |" * len(matrix.columns)]
        for family, by_column in grid:
            cells = [md(by_column[column.anchor].text) if column.anchor in by_column else ""
                     for column in matrix.columns]
            lines.append(f"| `{md(family)}` | " + " | ".join(cells) + " |")
        lines += ["", "### The evidence", ""]
        lines += [f"- `{md(family)}` · {md(name)} · {md(given.text)} ({md(given.case)}): {md(given.evidence)}"
                  for family, name, given in _evidence(matrix, grid)]
    return lines


def _evidence(matrix: Matrix, grid: list[tuple[str, dict[str, Graded]]]) -> Iterator[tuple[str, str, Graded]]:
    """Each grade given, row by row, in the order of the matrix's columns: what both pages list."""
    for family, by_column in grid:
        for column in matrix.columns:
            if column.anchor in by_column:
                yield family, column.name, by_column[column.anchor]


def graded_html(matrix: Matrix) -> list[str]:
    e = html.escape
    parts: list[str] = []
    for graded in MATRICES:
        grid = graded_grid(matrix, graded)
        if not grid:
            continue
        parts += [f'<h2 id="{graded.anchor}">{e(graded.section)}</h2>', f'<p class="legend">{e(_legend(graded))}</p>',
                  f'<table class="matrix keywords"><thead><tr><th scope="col">{e(graded.row_name)}</th>'
                  + "".join(f'<th scope="col"><div class="name">{e(column.name)}</div></th>'
                            for column in matrix.columns)
                  + "</tr></thead><tbody>"]
        for family, by_column in grid:
            cells = []
            for column in matrix.columns:
                given = by_column.get(column.anchor)
                cells.append('<td class="not-run"></td>' if given is None else
                             f'<td class="grade {e(given.grade)}" title="{e(given.evidence)}">{e(given.text)}</td>')
            parts.append(f'<tr><th scope="row"><code>{e(family)}</code></th>{"".join(cells)}</tr>')
        parts += ["</tbody></table>", "<h3>The evidence</h3>", '<ul class="evidence">']
        parts += [f"<li><code>{e(family)}</code> · {e(name)} · <b>{e(given.text)}</b> ({e(given.case)}): "
                  f"{e(given.evidence)}</li>" for family, name, given in _evidence(matrix, grid)]
        parts.append("</ul>")
    return parts
