"""The keyword matrix of several runs: for each JSON Schema keyword family a run graded (its results rows'
`schema_keyword`), what each target did with it (enforced, refused, ignored) over its repetitions, with the evidence
in a line; as Markdown and as HTML, for the matrix pages."""

from __future__ import annotations

import html
from dataclasses import dataclass

from lmconform.report.markdown import md
from lmconform.report.matrix import Matrix

GRADE_MEANINGS = {
    "enforced": "every answer holds the keyword, though the prompt asks for one that breaks it",
    "refused": "the request is refused with a 4xx",
    "ignored": "the request is accepted and an answer breaks the keyword",
}
GRADE_SYMBOLS = {"enforced": "✓", "refused": "⊘", "ignored": "✗"}
SECTION = "Does it enforce my schema?"
ANCHOR = "schema-keywords"


@dataclass(frozen=True)
class Graded:
    grade: str
    evidence: str
    case: str
    pass_k: str  # "held/sent" with --repeat, else ""

    @property
    def text(self) -> str:
        symbol = GRADE_SYMBOLS.get(self.grade, "")
        return " ".join(filter(None, (symbol, self.grade, f"(pass^k {self.pass_k})" if self.pass_k else "")))


def keyword_grid(matrix: Matrix) -> list[tuple[str, dict[str, Graded]]]:
    """Each family graded in any column, in the order the runs' cases list them, with its grade by column anchor."""
    grid: dict[str, dict[str, Graded]] = {}
    for column in matrix.columns:
        for result in column.run.results:
            grade = result.schema_keyword
            if grade is not None:
                grid.setdefault(grade.family, {})[column.anchor] = Graded(grade.grade, grade.evidence, result.case,
                                                                          result.pass_k)
    return list(grid.items())


def _legend() -> str:
    return " · ".join(f"{GRADE_SYMBOLS[grade]} {grade}: {meaning}" for grade, meaning in GRADE_MEANINGS.items())


def keywords_markdown(matrix: Matrix) -> list[str]:
    grid = keyword_grid(matrix)
    if not grid:
        return []
    lines = ["", f'<a id="{ANCHOR}"></a>', f"## {SECTION}", "", md(_legend()), "",
             "| Keyword | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
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


def keywords_html(matrix: Matrix) -> list[str]:
    grid = keyword_grid(matrix)
    if not grid:
        return []
    e = html.escape
    parts = [f'<h2 id="{ANCHOR}">{e(SECTION)}</h2>', f'<p class="legend">{e(_legend())}</p>',
             '<table class="matrix keywords"><thead><tr><th scope="col">Keyword</th>'
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
