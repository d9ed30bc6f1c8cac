"""The matrix as one self-contained HTML page: inline CSS, no script, nothing fetched; everything a results file
holds is escaped."""

from __future__ import annotations

import html

from lmconform.report.matrix import (
    NOT_RUN,
    NOT_RUN_MEANING,
    OUTCOMES,
    Cell,
    Column,
    Matrix,
    Row,
    counts_text,
    css_class,
    detail_anchor,
    message_excerpt,
    target_facts,
)
from lmconform.vocabulary import outcome_css

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
