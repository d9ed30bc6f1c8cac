"""The matrix as GitHub-flavoured Markdown, for a README, a pull-request comment or the published compatibility
page: will it work (per client and surface, per target) first, then the targets, the checks, and the details."""

from __future__ import annotations

from lmconform.report.headline import legend
from lmconform.report.keywords import graded_markdown
from lmconform.report.markdown import md
from lmconform.report.matrix import (
    MODEL_MEANING,
    MODEL_SYMBOL,
    NOT_RUN,
    OUTCOMES,
    Cell,
    Column,
    Matrix,
    Row,
    counts_text,
    detail_anchor,
    headline_grid,
    message_excerpt,
    model_line,
    stable_reason,
    target_facts,
    why_anchor,
)

DEFAULT_TITLE = "lmconform conformance matrix"


def render_markdown(matrix: Matrix, title: str = DEFAULT_TITLE, intro: str = "") -> str:
    """`intro`: Markdown placed under the title as it is (the caller's own words)."""
    lines = [f"# {md(title)}", ""]
    if intro:
        lines += [intro, ""]
    lines += headline_markdown(matrix)
    lines += graded_markdown(matrix)
    lines += ["", "## Targets", "", "| | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
              "| --- |" + " --- |" * len(matrix.columns)]
    facts = [dict(target_facts(column, matrix.stable)) for column in matrix.columns]
    for name in facts[0] if facts else ():
        lines.append(f"| {name} | " + " | ".join(md(fact[name]) for fact in facts) + " |")
    lines.append("| checks | " + " | ".join(" · ".join(counts_text(matrix.column_counts(column)))
                                            for column in matrix.columns) + " |")
    legend_text = " · ".join(f"{style.symbol} {outcome}: {style.meaning}" for outcome, style in OUTCOMES.items())
    lines += ["", "## Checks", "", f"Legend: {legend_text} · {MODEL_SYMBOL}: {MODEL_MEANING} · blank: {NOT_RUN}", "",
              "| Check | Level | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
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
            if cell is not None and cell.has_details:
                lines += details(matrix, column, row, cell)
    return "\n".join(lines) + "\n"


def headline_markdown(matrix: Matrix) -> list[str]:
    """Will it work: a table of clients and one of surfaces, targets as columns; then why, for each that is not
    simply working."""
    lines = ["## Will it work?", "",
             " · ".join(f"{symbol} {status}: {md(meaning)}" for symbol, status, meaning in legend())]
    whys = []
    for title, names in headline_grid(matrix):
        lines += ["", f"| {title} | " + " | ".join(md(column.name) for column in matrix.columns) + " |",
                  "| --- |" + " --- |" * len(matrix.columns)]
        for name, by_column in names:
            cells = []
            for column in matrix.columns:
                line = by_column.get(column.anchor)
                if line is None:
                    cells.append("")
                elif line.why:
                    cells.append(f"[{line.verdict}](#{why_anchor(column, line)})")
                    whys.append(f'- <a id="{why_anchor(column, line)}"></a>**{md(column.name)}** · {md(line.name)}: '
                                f"{line.verdict}: {md(line.why)}"
                                + "".join(f"; {label}: {md(text)}" for label, text in line.notes))
                else:
                    cells.append(line.verdict)
            lines.append(f"| {md(name)} | " + " | ".join(cells) + " |")
    if whys:
        lines += ["", "### Why", "", *whys]
    return lines


def details(matrix: Matrix, column: Column, row: Row, cell: Cell) -> list[str]:
    shown = f"{OUTCOMES[cell.outcome].symbol} {cell.outcome}" if cell.outcome else MODEL_SYMBOL
    lines = ["", f'<a id="{detail_anchor(column, row)}"></a>', f"### {shown} · {md(column.name)} · {md(row.check)}",
             "", f"{md(row.title)} ({md(row.level)}; {md(cell.summary(matrix.stable))})", ""]
    for result in cell.not_passed:
        said = stable_reason(result) if matrix.stable else "\n".join(message_excerpt(result))
        lines.append(f"- {OUTCOMES[result.outcome].symbol} {result.outcome} {md(result.case)}<br>{md(said)}")
    lines += [f"- {MODEL_SYMBOL} {md(model_line(result, matrix.stable))}" for result in cell.model_dependent]
    return lines


def markdown_cell(column: Column, row: Row, cell: Cell | None) -> str:
    if cell is None:
        return ""
    return cell.symbol if not cell.has_details else f"[{cell.symbol}](#{detail_anchor(column, row)})"
