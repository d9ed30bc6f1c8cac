"""The headline as HTML: two tables (clients, surfaces), each line with its status, a small chart of its verdicts
and the reason of its worst finding. The charts are inline SVG: nothing is fetched, and the page stays one file."""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable

from lmconform.report.headline import legend, status_colours
from lmconform.verdicts.grades import Line
from lmconform.verdicts.headline import Headline
from lmconform.vocabulary import OUTCOME_STYLES, STATUS_STYLE, Outcome

CHART_WIDTH = 160
CHART_HEIGHT = 12
SMALLEST_SEGMENT = 3  # pixels: one failure among thousands of passes stays visible

STYLE = """
.lmc-answer { border-collapse: collapse; margin: .4em 0 1.2em; min-width: 60em; }
.lmc-answer caption { text-align: left; font-weight: bold; padding: .2em 0 .4em; color: #1d1d1d; }
.lmc-answer th, .lmc-answer td { border: 1px solid #d4d4d4; padding: .3em .6em; text-align: left;
                                 vertical-align: middle; color: #1d1d1d; }
.lmc-answer thead th { background: #f4f4f4; font-weight: normal; color: #444; }
.lmc-answer th[scope=row] { font-weight: bold; white-space: nowrap; }
.lmc-answer td.status { font-weight: bold; white-space: nowrap; }
.lmc-answer td.why { max-width: 60em; overflow-wrap: anywhere; }
.lmc-answer svg { display: block; }
.lmc-answer p.lmc-note { margin: .3em 0 0; color: #333; }
.lmc-answer p.lmc-note code { background: #f2f2f2; padding: 0 .2em; }
.lmc-legend { color: #444; margin: 0 0 1em; }
""" + "\n".join(f".lmc-answer td.status.{status.replace(' ', '-')} {{ background: {background}; color: {colour}; }}"
                for status in STATUS_STYLE for background, colour in [status_colours(status)])


def code_spans(text: str) -> str:
    """`text` escaped, its backticked spans (a config line, a flag, a field) shown as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def chart_svg(counts: Counter, label: str) -> str:
    """A bar split by outcome, passes first, in the report's outcome colours; each segment names its count."""
    total = sum(counts.values())
    if not total:
        return ""
    present = [outcome for outcome in Outcome if counts[outcome]]
    widths = {outcome: max(SMALLEST_SEGMENT, round(CHART_WIDTH * counts[outcome] / total)) for outcome in present}
    widest = max(present, key=lambda outcome: widths[outcome])
    widths[widest] -= sum(widths.values()) - CHART_WIDTH  # the rounding and the minimums taken from the widest
    parts, x = [], 0
    for outcome in present:
        style = OUTCOME_STYLES[outcome]
        parts.append(f'<rect x="{x}" y="0" width="{widths[outcome]}" height="{CHART_HEIGHT}" fill="{style.colour}" '
                     f'fill-opacity="0.75"><title>{counts[outcome]} {outcome}</title></rect>')
        x += widths[outcome]
    summary = ", ".join(f"{counts[outcome]} {outcome}" for outcome in reversed(present))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" height="{CHART_HEIGHT}" '
            f'viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" role="img" aria-label="{html.escape(label)}: {summary}">'
            f'{"".join(parts)}</svg>')


def headline_html(headline: Headline, link: Callable[[Line], str | None], lead: str = "") -> str:
    """`link(line)`: where the reason of a line points (its worst finding), or None."""
    e = html.escape
    parts = ['<section class="lmc-headline" id="will-it-work">', "<h2>Will it work?</h2>"]
    if lead:
        parts.append(f'<p class="lmc-lead">{lead}</p>')
    for caption, title, group in (("Clients: the answers replayed through what real programs run", "Client",
                                   headline.clients),
                                  ("Surfaces: what the API sends, judged on the wire", "Surface", headline.surfaces)):
        if not group:
            continue
        parts += [f'<table class="lmc-answer"><caption>{e(caption)}</caption>',
                  f'<thead><tr><th scope="col">{title}</th><th scope="col">Verdict</th>'
                  '<th scope="col">Verdicts</th><th scope="col">Why</th></tr></thead><tbody>']
        for line in group:
            why = e(line.why)
            target = link(line)
            if why and target:
                why = f'<a href="{e(target)}">{why}</a>'
            why += "".join(f'<p class="lmc-note"><b>{e(label)}</b>: {code_spans(text)}</p>'
                           for label, text in line.notes)
            parts.append(f'<tr id="{e(line.key)}"><th scope="row">{e(line.name)}</th>'
                         f'<td class="status {line.status.replace(" ", "-")}">{e(line.verdict)}</td>'
                         f"<td>{chart_svg(line.counts, line.name)}</td><td class=\"why\">{why}</td></tr>")
        parts.append("</tbody></table>")
    parts.append('<p class="lmc-legend">' + " · ".join(f"<b>{symbol} {status}</b>: {e(meaning)}"
                                                       for symbol, status, meaning in legend()) + "</p>")
    parts.append("</section>")
    return "\n".join(parts)
