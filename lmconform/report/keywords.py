"""The matrices of grades of several runs, as Markdown and as HTML, for the matrix pages: the keyword matrix (for each
JSON Schema keyword family a run graded, its results rows' `schema_keyword`, what each target did with it: enforced,
refused, ignored) and the tool-type matrix (for each Responses tool type beside `function`, its rows' `tool_type`:
honoured, refused, dropped); each over its repetitions, with the evidence in a line."""

from __future__ import annotations

import html
from dataclasses import dataclass

from lmconform.report.markdown import md
from lmconform.report.matrix import Matrix


@dataclass(frozen=True)
class GradeMatrix:
    """One matrix of grades: the member of a results row its grades travel in, its section and the meaning and
    symbol of each of its grades."""

    member: str
    section: str
    anchor: str
    heading: str  # of the column that names what is graded
    meanings: dict[str, str]
    symbols: dict[str, str]


KEYWORDS = GradeMatrix(
    "schema_keyword", "Does it enforce my schema?", "schema-keywords", "Keyword",
    {"enforced": "every answer holds the keyword, though the prompt asks for one that breaks it",
     "refused": "the request is refused with a 4xx",
     "ignored": "the request is accepted and an answer breaks the keyword"},
    {"enforced": "✓", "refused": "⊘", "ignored": "✗"})
TOOL_TYPES = GradeMatrix(
    "tool_type", "Does it take Codex's tool types?", "tool-types", "Tool type",
    {"honoured": "a call of the tool comes back in its own item type; a hosted tool is accepted and echoed",
     "refused": "the request is refused with a 4xx (a limit: what it costs Codex is in the evidence)",
     "dropped": "a 200, and the tool can never be called, or its call comes back in the wrong item type"},
    {"honoured": "✓", "refused": "⊘", "dropped": "✗"})
MATRICES = (KEYWORDS, TOOL_TYPES)


@dataclass(frozen=True)
class Graded:
    grade: str
    evidence: str
    case: str
    pass_k: str  # "held/sent" with --repeat, else ""
    symbol: str = ""  # its grade's, in its matrix

    @property
    def text(self) -> str:
        return " ".join(filter(None, (self.symbol, self.grade, f"(pass^k {self.pass_k})" if self.pass_k else "")))


def keyword_grid(matrix: Matrix, grades: GradeMatrix = KEYWORDS) -> list[tuple[str, dict[str, Graded]]]:
    """Each family graded in any column, in the order the runs' cases list them, with its grade by column anchor."""
    grid: dict[str, dict[str, Graded]] = {}
    for column in matrix.columns:
        for result in column.run.results:
            grade = getattr(result, grades.member)
            if grade is not None:
                grid.setdefault(grade.family, {})[column.anchor] = Graded(
                    grade.grade, grade.evidence, result.case, result.pass_k, grades.symbols.get(grade.grade, ""))
    return list(grid.items())


def _legend(grades: GradeMatrix) -> str:
    return " · ".join(f"{grades.symbols[grade]} {grade}: {meaning}" for grade, meaning in grades.meanings.items())


def keywords_markdown(matrix: Matrix) -> list[str]:
    """Every matrix of grades the runs hold, as Markdown."""
    return [line for grades in MATRICES for line in _markdown(matrix, grades)]


def keywords_html(matrix: Matrix) -> list[str]:
    """Every matrix of grades the runs hold, as HTML."""
    return [part for grades in MATRICES for part in _html(matrix, grades)]


def _markdown(matrix: Matrix, grades: GradeMatrix) -> list[str]:
    grid = keyword_grid(matrix, grades)
    if not grid:
        return []
    lines = ["", f'<a id="{grades.anchor}"></a>', f"## {grades.section}", "", md(_legend(grades)), "",
             f"| {grades.heading} | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
             "| --- |" + " --- |" * len(matrix.columns)]
    for family, by_column in grid:
        cells = [md(by_column[column.anchor].text) if column.anchor in by_column else "" for column in matrix.columns]
        lines.append(f"| `{md(family)}` | " + " | ".join(cells) + " |")
    lines += ["", "### The evidence", ""]
    lines += [f"- `{md(family)}` · {md(column.name)} · {md(graded.text)} ({md(graded.case)}): {md(graded.evidence)}"
              for family, column, graded in _evidence(matrix, grid)]
    return lines


def _evidence(matrix: Matrix, grid):
    """Each grade given, keyword by keyword, in the order of the matrix's columns: what both pages list."""
    for family, by_column in grid:
        for column in matrix.columns:
            if column.anchor in by_column:
                yield family, column, by_column[column.anchor]


def _html(matrix: Matrix, grades: GradeMatrix) -> list[str]:
    grid = keyword_grid(matrix, grades)
    if not grid:
        return []
    e = html.escape
    parts = [f'<h2 id="{grades.anchor}">{e(grades.section)}</h2>', f'<p class="legend">{e(_legend(grades))}</p>',
             f'<table class="matrix keywords"><thead><tr><th scope="col">{e(grades.heading)}</th>'
             + "".join(f'<th scope="col"><div class="name">{e(column.name)}</div></th>' for column in matrix.columns)
             + "</tr></thead><tbody>"]
    for family, by_column in grid:
        cells = []
        for column in matrix.columns:
            graded = by_column.get(column.anchor)
            cells.append('<td class="not-run"></td>' if graded is None else
                         f'<td class="grade {e(graded.grade)}" title="{e(graded.evidence)}">{e(graded.text)}</td>')
        parts.append(f'<tr><th scope="row"><code>{e(family)}</code></th>{"".join(cells)}</tr>')
    parts += ["</tbody></table>", "<h3>The evidence</h3>", '<ul class="evidence">']
    parts += [f"<li><code>{e(family)}</code> · {e(column.name)} · <b>{e(graded.text)}</b> ({e(graded.case)}): "
              f"{e(graded.evidence)}</li>" for family, column, graded in _evidence(matrix, grid)]
    return [*parts, "</ul>"]
