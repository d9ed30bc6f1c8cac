"""The HTML report of one run (`lmconform report RESULTS.json -o report.html`, or `pytest suites --report PATH`,
which calls the same builder), in the order a reader asks: will it work (per client, per surface), what the target
is, the findings grouped by check and cause, every verdict (filtered by outcome and searched as you type, fast for
tens of thousands of rows), when the answers arrived, and the whole exchange of each case with a finding. What is
shown only when opened is packed in the page until then (packed.py), so a target that breaks everything still gets
a page of a few hundred kilobytes.

It is built from the results record alone (docs/results-record.md), its exchanges included, so the page is the
same whichever process or processes played the cases, and whatever a check or a surface added to the registry
records shows up here without an edit. The page needs no network: CSS, SVG and script are inline; everything the
endpoint sent is escaped.
"""

from __future__ import annotations

import html
from collections import Counter

from lmconform.report.document import html_document
from lmconform.report.findings_html import STYLE as FINDINGS_STYLE
from lmconform.report.findings_html import finding_anchor, findings_html
from lmconform.report.headline_html import STYLE as HEADLINE_STYLE
from lmconform.report.headline_html import headline_html
from lmconform.report.packed import SCRIPT as PACKED_SCRIPT
from lmconform.report.packed import STYLE as PACKED_STYLE
from lmconform.report.packed import Packed
from lmconform.report.target_prose import target_html
from lmconform.report.timing import STYLE as TIMING_STYLE
from lmconform.report.timing import timing_html
from lmconform.report.verdicts_html import SCRIPT as VERDICTS_SCRIPT
from lmconform.report.verdicts_html import STYLE as VERDICTS_STYLE
from lmconform.report.verdicts_html import exchanges_html, verdicts_html
from lmconform.verdicts.grades import Line
from lmconform.verdicts.headline import Headline, build_headline
from lmconform.verdicts.records import RunResults
from lmconform.vocabulary import BREAKS, LIMITED, NOT_OFFERED, WORST_FIRST

STYLE = """
body { margin: 1em 1.5em; }
.lmc-page { color: #1d1d1d; font-size: 13px; max-width: 110em; }
.lmc-page h1 { font-size: 20px; margin: 0 0 .2em; }
.lmc-page h2 { margin: 1.2em 0 .4em; }
.lmc-page code { font-size: 12px; }
.lmc-page a { color: #1a56a8; }
.lmc-lead { font-size: 15px; margin: .2em 0 .6em; }
.lmc-target ul { margin: .2em 0 .6em; }
"""


def lead(headline: Headline, results: RunResults) -> str:
    """One sentence before the tables: which clients and surfaces break, or that nothing does."""
    e = html.escape
    counts = Counter(row.outcome for row in results.results)
    broken = [line for line in headline.lines if line.status == BREAKS]
    limited = [line for line in headline.lines if line.status == LIMITED]
    missing = [line for line in headline.lines if line.status == NOT_OFFERED]
    label = e(results.target.subject)
    if not results.results:
        return f"No check gave a verdict on {label}."
    if broken:
        names = ", ".join(e(line.name) for line in broken)
        text = f"<b>Not everything works with {label}</b>: {names} break{'s' if len(broken) == 1 else ''}."
    else:
        text = f"<b>Every client and surface works with {label}</b>: no MUST was broken on any case."
    if limited:
        text += f" Works with limits: {', '.join(e(line.name) for line in limited)}."
    if missing:
        text += f" Not offered: {', '.join(e(line.name) for line in missing)}."
    tally = ", ".join(f"{counts[outcome]} {outcome}" for outcome in WORST_FIRST if counts[outcome])
    return f"{text} {len(results.results)} verdicts: {e(tally)}."


def line_link(line: Line) -> str | None:
    return f"#{finding_anchor(line.worst.check)}" if line.worst is not None else None


def run_page(results: RunResults) -> str:
    """The whole page of one run's results record."""
    headline = build_headline(results.results)
    title = f"lmconform: {results.target.label}"
    packed = Packed()
    style = STYLE + HEADLINE_STYLE + FINDINGS_STYLE + VERDICTS_STYLE + TIMING_STYLE + PACKED_STYLE
    return html_document(title, style, [
        '<div class="lmc-page">',
        f"<h1>{html.escape(title)}</h1>",
        headline_html(headline, line_link, lead(headline, results)),
        target_html(results.target),
        findings_html(list(results.results), set(results.exchanges), packed),
        verdicts_html(results, results.nothing_to_judge, packed),
        timing_html(results.timing),
        exchanges_html(results.exchanges, packed),
        "</div>",
        packed.script(),
    ], PACKED_SCRIPT + VERDICTS_SCRIPT)
