"""Every verdict of the run's page, in a table filtered by outcome and searched as you type, and the exchanges kept
for the cases with a finding. Both are packed in the page (packed.py): the table is unpacked once the page has
loaded, opening on the findings; an exchange when it is opened (or a link leads to it)."""

from __future__ import annotations

import html
from collections import Counter

from lmconform.report.findings_html import FINDING_OUTCOMES, exchange_anchor, finding_anchor
from lmconform.report.packed import Packed
from lmconform.verdicts.records import RunResults
from lmconform.vocabulary import OUTCOME_STYLES, WORST_FIRST, Outcome

STYLE = """
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
# keystroke (after a short pause) by setting `hidden`. All of it starts once the rows are unpacked.
SCRIPT = """
(function () {
  var table = document.getElementById('lmc-verdicts');
  if (!table) { return; }
  table.addEventListener('lmc-unpacked', function (event) {
    if (event.target !== table) { return; }
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
      boxes[k].addEventListener('change', function (change) {
        table.classList.toggle('hide-' + change.target.dataset.outcome, !change.target.checked);
        count();
      });
    }
    search.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(find, 120); });
    search.addEventListener('search', find);
    if (search.value) { find(); } else { count(); }
  });
})();
"""


def shown_at_first(counts: Counter) -> set[Outcome]:
    """The outcomes the table opens on: the findings and the errors where there is one, else every outcome."""
    return set(FINDING_OUTCOMES) if any(counts[outcome] for outcome in FINDING_OUTCOMES) else set(Outcome)


def verdicts_html(results: RunResults, not_judged: int, packed: Packed) -> str:
    e = html.escape
    counts = Counter(Outcome(row.outcome) for row in results.results)
    shown = shown_at_first(counts)
    boxes = [f'<label><input type="checkbox" data-outcome="{outcome.css_class}"'
             f'{" checked" if outcome in shown else ""}> {OUTCOME_STYLES[outcome].symbol} {outcome} '
             f"({counts[outcome]})</label>"
             for outcome in WORST_FIRST if counts[outcome]]
    opening = (f"It opens on what was found ({', '.join(FINDING_OUTCOMES)}); tick an outcome to show its rows"
               if shown != set(Outcome) else "Nothing was found, so every verdict is shown; untick an outcome to "
               "hide its rows")
    parts = ['<section class="lmc-verdicts" id="verdicts">', "<h2>Every verdict</h2>",
             f"<p>One row per case and check that applied. {opening}; type to search cases, checks and reasons.</p>"
             if results.results else "<p>No verdicts.</p>",
             '<div class="lmc-controls">', *boxes,
             '<input type="search" id="lmc-search" placeholder="Search: a case, a check, a word of the reason" '
             'aria-label="Search the verdicts">', '<span id="lmc-shown"></span></div>']
    if not_judged:
        parts.append(f"<p>{not_judged} further case and check pairs had nothing to judge in the answer (a tool-call "
                     "check on an answer without a tool call, say): they are not verdicts and are not listed; "
                     "pytest counts them as skipped.</p>")
    head = '<div class="head">' + "".join(f"<span>{name}</span>" for name in
                                          ("Outcome", "Case", "Check", "Level", "Why")) + "</div>"
    rows = [head]
    for row in results.results:
        outcome = Outcome(row.outcome)
        check = e(row.check)
        if outcome is not Outcome.OK:
            check = f'<a href="#{finding_anchor(row.check)}">{check}</a>'
        rows.append(f'<div class="{outcome.css_class}"><span>{OUTCOME_STYLES[outcome].symbol} {outcome}'
                    f"</span><span>{e(row.case)}</span><span>{check}</span><span>{e(row.level)}</span>"
                    f"<span>{e(row.reason)}</span></div>")
    hidden = " ".join(f"hide-{outcome.css_class}" for outcome in WORST_FIRST if outcome not in shown)
    parts.append(packed.place("\n".join(rows), attributes=f' id="lmc-verdicts" class="{hidden}"'))
    parts.append("</section>")
    return "\n".join(parts)


def exchanges_html(exchanges: dict[str, str], packed: Packed) -> str:
    if not exchanges:
        return ""
    e = html.escape
    parts = ['<section class="lmc-exchanges" id="exchanges">', "<h2>Exchanges</h2>",
             "<p>For each case with a finding: the request as sent and the answer as received (status, headers, "
             "body as text), as the results record keeps them. Open a case to see its exchange.</p>"]
    parts += [f'<details id="{exchange_anchor(case)}"><summary><code>{e(case)}</code></summary>'
              f'{packed.place(e(text), tag="pre")}</details>'
              for case, text in sorted(exchanges.items())]
    parts.append("</section>")
    return "\n".join(parts)
