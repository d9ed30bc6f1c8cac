"""The matrix as one self-contained HTML page: inline CSS, no script, nothing fetched; everything a results file
holds is escaped."""

from __future__ import annotations

import html

from lmconform.report.document import html_document
from lmconform.report.headline import legend, status_colours
from lmconform.report.keywords import graded_html
from lmconform.report.matrix import (
    MODEL_MEANING,
    MODEL_SYMBOL,
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
    headline_grid,
    message_excerpt,
    model_line,
    stable_reason,
    target_facts,
    why_anchor,
)
from lmconform.vocabulary import STATUS_STYLE, outcome_css

DEFAULT_TITLE = "lmconform conformance matrix"

STYLE = """
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
td.status { white-space: nowrap; font-weight: bold; }
td.status a { color: inherit; }
td.grade { white-space: nowrap; font-weight: bold; }
td.grade.enforced, td.grade.honoured { background: #dafbe1; }
td.grade.refused { background: #fff8c5; }
td.grade.ignored { background: #ffebe9; }
td.grade.honoured { background: #dafbe1; }
td.grade.dropped { background: #ffebe9; }
.why li { margin: .2em 0; }
.model { background: #ffffff; }
""" + "\n".join(f"td.status.{status.replace(' ', '-')} {{ background: {background}; color: {colour}; }}"
                for status in STATUS_STYLE for background, colour in [status_colours(status)])


def render_html(matrix: Matrix, title: str = DEFAULT_TITLE, intro: str = "") -> str:
    """One self-contained page: inline CSS, no script, no external resource. `intro`: HTML placed under the
    title as it is (the caller's own words)."""
    e = html.escape
    parts = [
        f"<h1>{e(title)}</h1>",
        intro,
        *html_headline(matrix),
        *graded_html(matrix),
        "<h2>Checks</h2>",
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
            parts.extend(html_cell(column, row, matrix.cell(column, row), matrix.stable) for column in matrix.columns)
            parts.append("</tr>")
        parts.append("</tbody>")
    parts.append("</table>")
    parts.extend(html_details(matrix))
    return html_document(title, STYLE, parts)


def html_legend() -> str:
    items = [f'<li><span class="badge {css_class(outcome)}">{style.symbol}</span> <b>{outcome}</b>: '
             f"{style.meaning}</li>" for outcome, style in OUTCOMES.items()]
    items.append(f'<li><span class="badge model">{MODEL_SYMBOL}</span> <b>model-dependent</b>: {MODEL_MEANING}</li>')
    items.append(f'<li><span class="badge not-run">&nbsp;</span> <b>blank</b>: {NOT_RUN}, {NOT_RUN_MEANING}</li>')
    return '<h3>Legend</h3>\n<ul class="legend">\n' + "\n".join(items) + "\n</ul>"


def html_headline(matrix: Matrix) -> list[str]:
    """Will it work, per client and per surface, one column per target; then why, for each that does not
    simply work."""
    e = html.escape
    parts = ['<h2 id="will-it-work">Will it work?</h2>',
             '<p class="legend">' + " · ".join(f"<b>{symbol} {status}</b>: {e(meaning)}"
                                               for symbol, status, meaning in legend()) + "</p>"]
    whys = []
    for title, names in headline_grid(matrix):
        parts.append('<table class="matrix headline"><thead><tr>'
                     f'<th scope="col">{title}</th>'
                     + "".join(f'<th scope="col"><div class="name">{e(column.name)}</div></th>'
                               for column in matrix.columns) + "</tr></thead><tbody>")
        for name, by_column in names:
            cells = []
            for column in matrix.columns:
                line = by_column.get(column.anchor)
                if line is None:
                    cells.append('<td class="not-run"></td>')
                    continue
                verdict = e(line.verdict)
                if line.why:
                    verdict = f'<a href="#{why_anchor(column, line)}">{verdict}</a>'
                    whys.append(f'<li id="{why_anchor(column, line)}"><b>{e(column.name)}</b> · {e(line.name)}: '
                                f"{e(line.verdict)}: {e(line.why)}"
                                + "".join(f"<br><b>{e(label)}</b>: {e(text)}" for label, text in line.notes) + "</li>")
                cells.append(f'<td class="status {line.status.replace(" ", "-")}">{verdict}</td>')
            parts.append(f'<tr><th scope="row">{e(name)}</th>{"".join(cells)}</tr>')
        parts.append("</tbody></table>")
    if whys:
        parts += ["<h3>Why</h3>", '<ul class="why">', *whys, "</ul>"]
    return parts


def html_header(matrix: Matrix) -> str:
    e = html.escape
    cells = ['<th scope="col">Check</th>']
    for column in matrix.columns:
        facts = "".join(f'<div class="fact">{name} {e(value)}</div>'
                        for name, value in target_facts(column, matrix.stable))
        counts = " · ".join(e(part) for part in counts_text(matrix.column_counts(column)))
        cells.append(f'<th scope="col" id="target-{column.anchor}"><div class="name">{e(column.name)}</div>'
                     f'{facts}<div class="counts">checks: {counts}</div></th>')
    return "<thead><tr>" + "".join(cells) + "</tr></thead>"


def html_check(row: Row) -> str:
    e = html.escape
    return (f'<span class="level">{e(row.level)}</span> <code>{e(row.check)}</code>'
            f'<div class="title">{e(row.title)}</div>')


def html_cell(column: Column, row: Row, cell: Cell | None, stable: bool = False) -> str:
    """One cell; stable: its tooltip without case counts, which follow what a real model said."""
    e = html.escape
    if cell is None:
        return f'<td class="cell not-run" title="{e(column.name)}: {NOT_RUN}"></td>'
    tooltip = e(f"{column.name}: {row.check}: {cell.outcome or 'model-dependent'} ({cell.summary(stable)})")
    symbol = cell.symbol
    if cell.has_details:
        symbol = f'<a href="#{e(detail_anchor(column, row))}">{symbol}</a>'
    kind = css_class(cell.outcome) if cell.outcome else "model"
    return f'<td class="cell {kind}" title="{tooltip}">{symbol}</td>'


def html_details(matrix: Matrix) -> list[str]:
    e = html.escape
    parts = ['<h2 id="details">Details</h2>',
             "<p>Per target, every check that is not OK: the cases that did not pass, the first lines of their "
             "message, and a curl that reproduces each.</p>"]
    for column in matrix.columns:
        shown = [(row, cell) for row in matrix.rows
                 if (cell := matrix.cell(column, row)) is not None and cell.has_details]
        if not shown:
            continue
        parts.append(f"<h3>{e(column.name)}</h3>")
        for row, cell in shown:
            badge = (f'<span class="badge {css_class(cell.outcome)}">{OUTCOMES[cell.outcome].symbol} {cell.outcome}'
                     "</span>" if cell.outcome else f'<span class="badge model">{MODEL_SYMBOL}</span>')
            parts.append(f'<section class="detail" id="{e(detail_anchor(column, row))}">')
            parts.append(f"<h4>{badge} <code>{e(row.check)}</code> {e(row.title)}</h4>")
            parts.append(f"<p>{e(column.name)} · {e(row.level)} · {e(cell.summary(matrix.stable))} · "
                         f'<a href="#check-{e(row.anchor)}">back to the matrix</a></p>')
            for result in cell.not_passed:
                case_style = OUTCOMES[result.outcome]
                parts.append(f'<div class="case"><div><span class="badge {css_class(result.outcome)}">'
                             f"{case_style.symbol} {result.outcome}</span> <code>{e(result.case)}</code></div>")
                said = stable_reason(result) if matrix.stable else chr(10).join(message_excerpt(result))
                parts.append(f'<pre class="message">{e(said)}</pre>')
                if result.curl and not matrix.stable:
                    parts.append(f'<pre class="curl">{e(result.curl)}</pre>')
                parts.append("</div>")
            for result in cell.model_dependent:
                parts.append(f'<div class="case"><span class="badge model">{MODEL_SYMBOL}</span> '
                             f"{e(model_line(result, matrix.stable))}</div>")
            parts.append("</section>")
    return parts
