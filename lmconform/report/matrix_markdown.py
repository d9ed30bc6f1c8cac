"""The matrix as GitHub-flavoured Markdown, for a README or a pull-request comment."""

from __future__ import annotations

import html
import re

from lmconform.report.matrix import (
    NOT_RUN,
    OUTCOMES,
    Cell,
    Column,
    Matrix,
    Row,
    counts_text,
    detail_anchor,
    message_excerpt,
    target_facts,
)

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
