"""What `lmconform check` prints when the run is over, from its results record alone: the checks that did not pass,
worst first (each once, with the cases it failed on), then the "will it work?" headline and the tally."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from lmconform.report.headline import counts_line, headline_text
from lmconform.report.target_prose import describe
from lmconform.verdicts.grades import dialect_limit
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.records import CaseResult, load_run
from lmconform.vocabulary import Outcome

SHOWN = (Outcome.ERROR, Outcome.FAILED, Outcome.NON_STRICT)  # INFO informs; the report lists it
KIND_ORDER = {"wire": 0, "differential": 1, "client": 2}  # the rule broken before the client that breaks on it
CASES_SHOWN = 3


def findings_text(record: Path) -> str:
    results = load_run(record)
    width = shutil.get_terminal_size().columns
    lines = [*finding_lines(results.results), "", f"Will it work? {describe(results.target).sentence}",
             *headline_text(build_headline(results.results), width),
             f"Verdicts: {counts_line(Counter(row.outcome for row in results.results))}."]
    return "\n".join(lines).lstrip("\n")


def finding_lines(rows: tuple[CaseResult, ...]) -> list[str]:
    """`FAILED [check.id] title (2 cases: chat/a, chat/b)` per check, the most severe first; then the rules before
    the clients that break on them, the check failing on most cases, and the id. A known failure (--expect) says so."""
    by_check: dict[str, list[CaseResult]] = {}
    for row in rows:
        if row.outcome in SHOWN:
            by_check.setdefault(row.check, []).append(row)
    if not by_check:
        return []

    def rank(check: str) -> tuple:
        found = by_check[check]
        worst = max(Outcome(row.outcome).severity for row in found)
        return -worst, KIND_ORDER.get(found[0].kind, 3), -len(found), check

    lines = [f"Findings: {len(by_check)} check{'' if len(by_check) == 1 else 's'} did not pass"]
    for check in sorted(by_check, key=rank):
        found = by_check[check]
        worst = max(found, key=lambda row: Outcome(row.outcome).severity)
        cases = sorted({row.case for row in found})
        shown = ", ".join(cases[:CASES_SHOWN]) + (", …" if len(cases) > CASES_SHOWN else "")
        known = ""
        if all(row.known and row.outcome in row.known.outcomes for row in found):
            known = " (a known limit of the target's dialect)" if all(map(dialect_limit, found)) else " (known: --expect)"
        lines.append(f"  {worst.outcome:<10} [{check}] {worst.title}{known}")
        lines.append(f"             {len(cases)} case{'' if len(cases) == 1 else 's'}: {shown}"
                     + (f" · {worst.reason}" if worst.reason and worst.reason != worst.title else ""))
    return lines
