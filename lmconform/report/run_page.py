"""The HTML report of one run (`lmconform report RESULTS.json -o report.html`, or `pytest suites --report PATH`,
which calls the same builder), in the order a reader asks: will it work (per client, per surface), what the target
is, the findings grouped by check, every verdict (filtered by outcome and searched as you type, fast for tens of
thousands of rows), and the whole exchange of each case with a finding.

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
from lmconform.report.findings_html import exchange_anchor, finding_anchor, findings_html
from lmconform.report.headline_html import STYLE as HEADLINE_STYLE
from lmconform.report.headline_html import headline_html
from lmconform.report.target_prose import target_html
from lmconform.report.timing import STYLE as TIMING_STYLE
from lmconform.report.timing import timing_html
from lmconform.verdicts.grades import BREAKS, LIMITED, NOT_OFFERED, Line
from lmconform.verdicts.headline import Headline, build_headline
from lmconform.verdicts.records import RunResults
from lmconform.vocabulary import OUTCOME_STYLES, WORST_FIRST, Outcome

HIDDEN_AT_FIRST = frozenset({Outcome.OK})  # passes are folded away; a tick shows them

STYLE = """
body { margin: 1em 1.5em; }
.lmc-page { color: #1d1d1d; font-size: 13px; max-width: 110em; }
.lmc-page h1 { font-size: 20px; margin: 0 0 .2em; }
.lmc-page h2 { margin: 1.2em 0 .4em; }
.lmc-page code { font-size: 12px; }
.lmc-page a { color: #1a56a8; }
.lmc-lead { font-size: 15px; margin: .2em 0 .6em; }
.lmc-target ul { margin: .2em 0 .6em; }
.lmc-controls { display: flex; flex-wrap: wrap; gap: .4em 1em; align-items: center; margin: .4em 0; }
.lmc-controls label { white-space: nowrap; }
.lmc-controls input[type=search] { min-width: 28em; padding: .25em .4em; font-size: 13px; }
#lmc-verdicts { border: 1px solid #e0e0e0; }
#lmc-verdicts > div { display: grid; grid-template-columns: 8.5em minmax(10em, 2fr) minmax(12em, 2.4fr) 5em 3fr;
                      border-top: 1px solid #e0e0e0; content-visibility: auto; contain-intrinsic-size: auto 1.6em; }
#lmc-verdicts > div > span { padding: .15em .5em; overflow-wrap: anywhere; color: #1d1d1d; }
#lmc-verdicts > div > span:first-child { white-space: nowrap; font-weight: bold; }
#lmc-verdicts > div[hidden] { display: none; }
#lmc-verdicts > div.head { background: #f4f4f4; position: sticky; top: 0; content-visibility: visible;
                           border-top: none; z-index: 1; }
.lmc-exchanges details { margin: .3em 0; }
.lmc-exchanges summary { cursor: pointer; }
""" + "\n".join(f"#lmc-verdicts > div.{outcome.css_class} > span:first-child {{ background: {style.background}; "
                f"color: {style.colour}; }}\n#lmc-verdicts.hide-{outcome.css_class} > div.{outcome.css_class} "
                "{ display: none; }" for outcome, style in OUTCOME_STYLES.items())

# The rows are a grid, not a table: a browser lays out and paints only the rows on screen (content-visibility),
# which keeps tens of thousands of them quick to show. Filter by outcome: a class on the list hides an outcome's
# rows (one style change, however many rows). Search: each row's text is read once, then matched on each
# keystroke (after a short pause) by setting `hidden`.
SCRIPT = """
(function () {
  var table = document.getElementById('lmc-verdicts');
  if (!table) { return; }
  var rows = table.querySelectorAll(':scope > div:not(.head)'), texts = null, timer = null;
  var search = document.getElementById('lmc-search'), shown = document.getElementById('lmc-shown');
  var boxes = document.querySelectorAll('.lmc-controls input[data-outcome]');
  function count() {
    var n = 0;
    for (var i = 0; i < rows.length; i++) {
      if (!rows[i].hidden && !table.classList.contains('hide-' + rows[i].className)) { n++; }
    }
    shown.textContent = n + ' of ' + rows.length + ' verdicts shown';
  }
  function find() {
    var words = search.value.trim().toLowerCase();
    if (texts === null) {
      texts = [];
      for (var i = 0; i < rows.length; i++) { texts.push(rows[i].textContent.toLowerCase()); }
    }
    for (var j = 0; j < rows.length; j++) { rows[j].hidden = words !== '' && texts[j].indexOf(words) < 0; }
    count();
  }
  for (var k = 0; k < boxes.length; k++) {
    boxes[k].addEventListener('change', function (event) {
      table.classList.toggle('hide-' + event.target.dataset.outcome, !event.target.checked);
      count();
    });
  }
  search.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(find, 120); });
  search.addEventListener('search', find);
  count();
})();
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


def verdicts_html(results: RunResults, not_judged: int) -> str:
    e = html.escape
    counts = Counter(row.outcome for row in results.results)
    boxes = [f'<label><input type="checkbox" data-outcome="{outcome.css_class}"'
             f'{"" if outcome in HIDDEN_AT_FIRST else " checked"}> {OUTCOME_STYLES[outcome].symbol} {outcome} '
             f"({counts[outcome]})</label>" for outcome in WORST_FIRST if counts[outcome]]
    hidden = " ".join(f"hide-{outcome.css_class}" for outcome in HIDDEN_AT_FIRST)
    parts = ['<section class="lmc-verdicts" id="verdicts">', "<h2>Every verdict</h2>",
             "<p>One row per case and check that applied. Tick an outcome to show its rows; type to search cases, "
             "checks and reasons.</p>" if results.results else "<p>No verdicts.</p>",
             '<div class="lmc-controls">', *boxes,
             '<input type="search" id="lmc-search" placeholder="Search: a case, a check, a word of the reason" '
             'aria-label="Search the verdicts">', '<span id="lmc-shown"></span></div>']
    if not_judged:
        parts.append(f"<p>{not_judged} further case and check pairs had nothing to judge in the answer (a tool-call "
                     "check on an answer without a tool call, say): they are not verdicts and are not listed; "
                     "pytest counts them as skipped.</p>")
    parts.append(f'<div id="lmc-verdicts" class="{hidden}">'
                 '<div class="head">' + "".join(f'<span>{name}</span>' for name in
                                                           ("Outcome", "Case", "Check", "Level", "Why")) + "</div>")
    for row in results.results:
        outcome = Outcome(row.outcome)
        check = e(row.check)
        if outcome is not Outcome.OK:
            check = f'<a href="#{finding_anchor(row.check)}">{check}</a>'
        parts.append(f'<div class="{outcome.css_class}"><span>{OUTCOME_STYLES[outcome].symbol} {outcome}'
                     f"</span><span>{e(row.case)}</span><span>{check}</span><span>{e(row.level)}</span>"
                     f"<span>{e(row.reason)}</span></div>")
    parts.append("</div></section>")
    return "\n".join(parts)


def exchanges_html(exchanges: dict[str, str]) -> str:
    if not exchanges:
        return ""
    e = html.escape
    parts = ['<section class="lmc-exchanges" id="exchanges">', "<h2>Exchanges</h2>",
             "<p>For each case with a finding: the request as sent and the answer as received (status, headers, "
             "body as text), as the results record keeps them.</p>"]
    parts += [f'<details id="{exchange_anchor(case)}"><summary><code>{e(case)}</code></summary><pre>{e(text)}</pre>'
              "</details>" for case, text in sorted(exchanges.items())]
    parts.append("</section>")
    return "\n".join(parts)


def run_page(results: RunResults) -> str:
    """The whole page of one run's results record."""
    headline = build_headline(results.results)
    title = f"lmconform: {results.target.label}"
    return html_document(title, STYLE + HEADLINE_STYLE + FINDINGS_STYLE + TIMING_STYLE, [
        '<div class="lmc-page">',
        f"<h1>{html.escape(title)}</h1>",
        headline_html(headline, line_link, lead(headline, results)),
        target_html(results.target),
        findings_html(list(results.results), set(results.exchanges)),
        verdicts_html(results, results.nothing_to_judge),
        timing_html(results.timing),
        exchanges_html(results.exchanges),
        "</div>",
    ], SCRIPT)
