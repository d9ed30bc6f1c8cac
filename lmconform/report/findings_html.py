"""The findings of one run as HTML, grouped by check and, within a check, by cause: worst first, each check with its
title, level and how many cases, each cause once with its count and its first case whole (the Expected/Actual
lines, the offending events, the curl, what the clients made of the same answer and a link to the whole exchange);
the other cases of the cause are a click away, packed in the page (packed.py) until they are opened, so that a
server that breaks every tool call gives a page of its causes, not of its thousand cases. Checks that held on every
case are folded into one list; checks the target does not offer into another.

Everything shown comes from the results record's rows (and the exchanges, as text), each string escaped."""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable

from lmconform.report.packed import Packed
from lmconform.surfaces import surface_name
from lmconform.verdicts.grades import LEVEL_RANK, fragment
from lmconform.verdicts.records import CaseResult
from lmconform.vocabulary import OUTCOME_STYLES, Outcome

# Findings open onto their cases; INFO is reported only, UNSUPPORTED is the target's choice.
FINDING_OUTCOMES = (Outcome.ERROR, Outcome.FAILED, Outcome.NON_STRICT, Outcome.INFO)
# What differs between cases of one cause: numbers, and values in quotes (a quote inside a word is an apostrophe).
VARYING = re.compile(r"(?<!\w)'[^']*'(?!\w)|(?<!\w)\"[^\"]*\"(?!\w)|\d+(?:\.\d+)?")
MESSAGE_SKIPPED = ("Level: ", "Reproduce: ", "Reference: ", "Event: ")

STYLE = """
.lmc-finding { border: 1px solid #d4d4d4; border-radius: 4px; margin: .5em 0; padding: .2em .7em; color: #1d1d1d; }
.lmc-finding > summary { cursor: pointer; padding: .3em 0; font-size: 13px; }
.lmc-finding > summary code { font-weight: bold; }
.lmc-case { border-top: 1px solid #e4e4e4; padding: .3em 0 .4em; }
.lmc-cause { margin: .3em 0 .6em; }
.lmc-cause-head { margin: .5em 0 .1em; padding-top: .3em; border-top: 1px solid #d4d4d4; }
.lmc-more { margin: .2em 0 .2em 1em; }
.lmc-more > summary { cursor: pointer; color: #1a56a8; }
.lmc-case > summary { cursor: pointer; font-size: 13px; }
.lmc-case > summary .lmc-why { color: #444; }
.lmc-case h5 { margin: .5em 0 .1em; font-size: 12px; color: #444; }
.lmc-page pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; border: 1px solid #ddd;
                padding: .45em; margin: .15em 0; color: #1d1d1d; font-size: 12px; }
.lmc-page pre.curl { background: #f2f5f9; }
.lmc-clients { border-collapse: collapse; }
.lmc-clients td { padding: .1em .8em .1em 0; vertical-align: top; color: #1d1d1d; }
.lmc-known { color: #444; font-style: italic; }
.lmc-badge { display: inline-block; padding: 0 .4em; border-radius: 3px; font-weight: bold; white-space: nowrap; }
.lmc-level { font-size: .8em; border: 1px solid #888; border-radius: 3px; padding: 0 .3em; color: #333; }
.lmc-folded { margin: .6em 0; color: #1d1d1d; }
.lmc-folded > summary { cursor: pointer; font-weight: bold; }
.lmc-folded table { border-collapse: collapse; margin: .4em 0; }
.lmc-folded td, .lmc-folded th { border: 1px solid #e0e0e0; padding: .15em .5em; text-align: left; color: #1d1d1d; }
""" + "\n".join(f".lmc-badge.{outcome.css_class} {{ background: {style.background}; color: {style.colour}; }}"
                for outcome, style in OUTCOME_STYLES.items())


def finding_anchor(check: str) -> str:
    return f"finding-{fragment(check)}"


def case_anchor(check: str, case: str) -> str:
    return f"{finding_anchor(check)}--{fragment(case)}"


def exchange_anchor(case: str) -> str:
    return f"exchange-{fragment(case)}"


def badge(outcome: str) -> str:
    style = OUTCOME_STYLES[Outcome(outcome)]
    return f'<span class="lmc-badge {Outcome(outcome).css_class}">{style.symbol} {outcome}</span>'


def by_check(rows: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    grouped: dict[str, list[CaseResult]] = {}
    for row in rows:
        grouped.setdefault(row.check, []).append(row)
    return grouped


def worst_outcome(rows: list[CaseResult]) -> Outcome:
    return max((Outcome(row.outcome) for row in rows), key=lambda outcome: outcome.severity)


def message_lines(row: CaseResult) -> str:
    """The message without what the page shows elsewhere: the headline, the level line, the events, the curl and
    the reference."""
    lines = row.message.splitlines()[1:]
    return "\n".join(line for line in lines if not line.startswith(MESSAGE_SKIPPED))


def known_html(row: CaseResult) -> str:
    if row.known is None:
        return ""
    e = html.escape
    kind = (f"model-dependent: may be {' or '.join(row.known.outcomes)}" if row.known.model_dependent
            else "known")
    where = f" ({e(row.known.file)})" if row.known.file else ""
    return f'<p class="lmc-known">{e(kind)}: {e(row.known.reason)}{where}</p>'


def story_html(row: CaseResult, clients: list[CaseResult], exchanges: set[str]) -> str:
    """The whole story of one case of a finding: Expected/Actual, the offending events, the curl, what the clients
    made of the same answer and a link to the exchange."""
    e = html.escape
    parts = [known_html(row), f"<h5>Expected / Actual</h5><pre>{e(message_lines(row))}</pre>"]
    if row.evidence:
        parts.append(f"<h5>Offending events</h5><pre>{e(row.evidence)}</pre>")
    if row.curl:
        parts.append(f'<h5>Reproduce</h5><pre class="curl">{e(row.curl)}</pre>')
    if clients:
        parts.append("<h5>What the clients make of the same answer</h5><table class=\"lmc-clients\">")
        for client in clients:
            said = client.reason if client.outcome != Outcome.OK else client.title
            parts.append(f"<tr><td>{badge(client.outcome)}</td><td><code>{e(client.check)}</code></td>"
                         f"<td>{e(said)}</td></tr>")
        parts.append("</table>")
    if row.case in exchanges:
        parts.append(f'<p><a href="#{exchange_anchor(row.case)}">The whole exchange of {e(row.case)}</a></p>')
    return "".join(parts)


def case_line(row: CaseResult) -> str:
    e = html.escape
    return (f'<summary>{badge(row.outcome)} <code>{e(row.case)}</code> <span class="lmc-why">{e(row.reason)}</span>'
            "</summary>")


def cause_of(row: CaseResult) -> tuple[str, str, str]:
    """What the cases of one cause share: the outcome and the first Expected and Actual lines, their numbers and
    quoted values left out (`sent 4 times` and `sent 6 times` have one cause, as have `Void reads ''` and
    `Void reads 'set_light'`)."""
    expected = next(iter(row.lines("Expected:")), "")
    return row.outcome, VARYING.sub("…", expected), VARYING.sub("…", row.reason)


def shared(texts: list[str]) -> str:
    """What the cases of a cause say: the text itself where they all say the same, else what varies elided."""
    return texts[0] if len(set(texts)) == 1 else VARYING.sub("…", texts[0])


def cause_html(rows: list[CaseResult], clients_by_case: dict[str, list[CaseResult]], exchanges: set[str],
               packed: Packed) -> str:
    """One cause of a finding: how many cases, the first case whole, and the others a click away (each folded,
    its story packed until it is opened)."""
    e = html.escape
    first, others = rows[0], rows[1:]
    said = " · ".join(f"{name} {e(text)}" for name, text in (
        ("Expected:", shared([next(iter(row.lines("Expected:")), "") for row in rows])),
        ("Actual:", shared([row.reason for row in rows]))) if text)
    parts = [f'<div class="lmc-cause"><p class="lmc-cause-head"><b>{len(rows)} case{"s" if len(rows) != 1 else ""}'
             f"</b> · {said}</p>",
             f'<details class="lmc-case" id="{case_anchor(first.check, first.case)}" open>{case_line(first)}'
             f"{story_html(first, clients_by_case.get(first.case, []), exchanges)}</details>"]
    if others:
        folded_cases = "\n".join(
            f'<details class="lmc-case" id="{case_anchor(row.check, row.case)}">{case_line(row)}'
            f'{packed.place(story_html(row, clients_by_case.get(row.case, []), exchanges))}'
            "</details>" for row in others)
        parts.append(f'<details class="lmc-more"><summary>{len(others)} more case{"s" if len(others) != 1 else ""} '
                     f'of this cause</summary>{packed.place(folded_cases)}'
                     "</details>")
    parts.append("</div>")
    return "".join(parts)


def check_html(check: str, rows: list[CaseResult], clients_by_case: dict[str, list[CaseResult]],
               exchanges: set[str], open_: bool, packed: Packed) -> str:
    e = html.escape
    first = rows[0]
    not_passed = [row for row in rows if row.outcome != Outcome.OK]
    not_passed.sort(key=lambda row: (-Outcome(row.outcome).severity, row.case))
    counts = Counter(row.outcome for row in rows)
    tally = ", ".join(f"{counts[outcome]} {outcome}" for outcome in reversed(Outcome) if counts[outcome])
    causes: dict[tuple[str, str, str], list[CaseResult]] = {}
    for row in not_passed:
        causes.setdefault(cause_of(row), []).append(row)
    body = []
    reference = next((line[len("Reference: "):] for line in first.message.splitlines()
                      if line.startswith("Reference: ")), "")
    if reference:
        shown = f'<a href="{e(reference)}">{e(reference)}</a>' if reference.startswith("https://") else e(reference)
        body.append(f"<p>Rule: {shown}</p>")
    body += [cause_html(group, clients_by_case, exchanges, packed)
             for group in sorted(causes.values(), key=lambda group: (-Outcome(group[0].outcome).severity,
                                                                     -len(group), group[0].case))]
    return "\n".join([
        f'<details class="lmc-finding" id="{finding_anchor(check)}"{" open" if open_ else ""}>',
        f"<summary>{badge(worst_outcome(rows))} <code>{e(check)}</code> {e(first.title)} "
        f'<span class="lmc-level">{e(first.level)}</span> · {len(not_passed)} of {len(rows)} '
        f"case{'s' if len(rows) != 1 else ''} ({e(tally)}){f', {len(causes)} causes' if len(causes) > 1 else ''}"
        "</summary>",
        *(body if open_ else [packed.place("\n".join(body))]),  # a folded check's cases are packed until opened
        "</details>"])


def findings_html(rows: list[CaseResult], exchanges: set[str], packed: Packed) -> str:
    """The findings section: checks with a finding, worst first and open; then folded, the checks the target
    does not offer and the checks that held everywhere."""
    e = html.escape
    checks = by_check(rows)
    clients_by_case: dict[str, list[CaseResult]] = {}
    for row in rows:
        if row.kind == "client":
            clients_by_case.setdefault(row.case, []).append(row)
    found = [check for check, group in checks.items() if worst_outcome(group) in FINDING_OUTCOMES]
    found.sort(key=lambda check: (-worst_outcome(checks[check]).severity, LEVEL_RANK.get(checks[check][0].level, 3),
                                  -sum(row.outcome != Outcome.OK for row in checks[check]), check))
    unsupported = sorted(check for check, group in checks.items() if worst_outcome(group) is Outcome.UNSUPPORTED)
    passed = sorted(check for check, group in checks.items() if worst_outcome(group) is Outcome.OK)
    parts = ['<section class="lmc-findings" id="findings">', "<h2>Findings, by check</h2>"]
    if not found:
        parts.append("<p>No finding: every check held on every case it judged.</p>")
    parts += [check_html(check, checks[check], clients_by_case, exchanges,
                         worst_outcome(checks[check]) is not Outcome.INFO, packed) for check in found]
    if unsupported:
        parts.append(folded(packed, "not-offered", f"– {len(unsupported)} checks found nothing to judge because "
                            f"the target lacks the feature ({sum(len(checks[check]) for check in unsupported)} verdicts)",
                            ("Check", "Cases", "Why"),
                            [(f"<code>{e(check)}</code>", str(len(checks[check])), e(checks[check][0].reason))
                             for check in unsupported]))
    if passed:
        parts.append(folded(packed, "passed", f"✓ {len(passed)} checks held on every case they judged "
                            f"({sum(len(checks[check]) for check in passed)} verdicts)",
                            ("Check", "Level", "Surface", "Cases", "What holds"),
                            [(f"<code>{e(check)}</code>", e(checks[check][0].level),
                              e(surface_name(checks[check][0].surface)), str(len(checks[check])),
                              e(checks[check][0].title)) for check in passed]))
    parts.append("</section>")
    return "\n".join(parts)


def folded(packed: Packed, anchor: str, summary: str, headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A table folded away under its one-line summary, packed until it is opened; the cells are HTML already."""
    head = "".join(f"<th>{name}</th>" for name in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return (f'<details class="lmc-folded" id="{anchor}"><summary>{html.escape(summary)}</summary>'
            f"{packed.place(f'<table><tr>{head}</tr>{body}</table>')}</details>")
