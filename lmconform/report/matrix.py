"""The matrix: several runs' results records merged into one page of checks x targets.

This is where an implementer stands, at a glance: one row per check (grouped by surface), one column per target,
each cell the worst outcome of that check over the run's cases, linked to the failing cases further down the page
with their Expected/Actual lines and a curl that reproduces them.

It reads only results records (INTERFACES.md), never the check registry, so it renders records written by other
versions of the suite. Every string it takes from a file is escaped: a model's answer may hold markup.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby

from lmconform.report.records import CaseResult, RunResults
from lmconform.vocabulary import OUTCOME_STYLES, WORST_FIRST, Outcome, surface_of, surface_rank

# Worst first: a cell shows the first of these among its cases.
OUTCOMES = {str(outcome): OUTCOME_STYLES[outcome] for outcome in WORST_FIRST}
RANK = {outcome: rank for rank, outcome in enumerate(OUTCOMES)}


def css_class(outcome: str) -> str:
    return Outcome(outcome).css_class


MESSAGE_LINES = 8  # the level line and the first two failures: Expected, Actual and the offending event
LINE_CHARS = 400  # an Event line can carry a whole body excerpt; the curl reproduces it in full
NOT_RUN = "not run"
NOT_RUN_MEANING = "no case of the run exercised the check"


@dataclass(frozen=True)
class Column:
    name: str  # the label, its server version, and what tells it apart from a column with the same label
    anchor: str
    run: RunResults


@dataclass(frozen=True)
class Row:
    check: str
    surface: str
    level: str
    title: str
    anchor: str


@dataclass
class Cell:
    """The outcomes of one check over one run's cases."""

    counts: Counter = field(default_factory=Counter)
    not_passed: list[CaseResult] = field(default_factory=list)

    def add(self, result: CaseResult) -> None:
        self.counts[result.outcome] += 1
        if result.outcome != "OK":
            self.not_passed.append(result)

    @property
    def outcome(self) -> str:
        return min(self.counts, key=RANK.__getitem__)

    @property
    def not_passed_cases(self) -> list[str]:
        return [result.case for result in self.not_passed]

    def summary(self) -> str:
        """`FAILED 1, OK 8 of 9 cases`, worst first."""
        parts = [f"{outcome} {self.counts[outcome]}" for outcome in OUTCOMES if self.counts[outcome]]
        total = sum(self.counts.values())
        return f"{', '.join(parts)} of {total} case{'s' if total != 1 else ''}"


@dataclass(frozen=True)
class Matrix:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    cells: dict[tuple[str, str], Cell]  # (column anchor, check id) -> cell; absent where the check did not run

    def cell(self, column: Column, row: Row) -> Cell | None:
        return self.cells.get((column.anchor, row.check))

    def surfaces(self) -> list[tuple[str, list[Row]]]:
        return [(surface, list(rows)) for surface, rows in groupby(self.rows, key=lambda row: row.surface)]

    def column_counts(self, column: Column) -> Counter:
        """How many checks the column shows with each outcome, and how many did not run."""
        counts = Counter()
        for row in self.rows:
            cell = self.cell(column, row)
            counts[cell.outcome if cell else NOT_RUN] += 1
        return counts


# --- building ----------------------------------------------------------------------------------------------------

def build_matrix(runs: list[RunResults]) -> Matrix:
    columns = tuple(Column(name=name, anchor=f"t{number}", run=run)
                    for number, (name, run) in enumerate(zip(column_names(runs), runs), start=1))
    first_seen: dict[str, CaseResult] = {}
    cells: dict[tuple[str, str], Cell] = {}
    for column in columns:
        for result in column.run.results:
            first_seen.setdefault(result.check, result)
            cells.setdefault((column.anchor, result.check), Cell()).add(result)
    ordered = sorted(first_seen.values(), key=lambda result: (surface_rank(surface_of(result.check)), result.check))
    anchors = unique_anchors([result.check for result in ordered])
    rows = tuple(Row(check=result.check, surface=surface_of(result.check), level=result.level,
                     title=result.title or headline_title(result), anchor=anchor)
                 for result, anchor in zip(ordered, anchors))
    return Matrix(columns=columns, rows=rows, cells=cells)


def column_names(runs: list[RunResults]) -> list[str]:
    """Label and server version; runs that share both are told apart by URL, else file, else position."""
    names = [" ".join(filter(None, (run.target.label, run.target.server_version))) for run in runs]
    for name in set(names):
        same = [index for index, other in enumerate(names) if other == name]
        if len(same) > 1:
            for index, suffix in zip(same, distinguishing([runs[index] for index in same])):
                names[index] = f"{name} ({suffix})"
    return names


def distinguishing(runs: list[RunResults]) -> list[str]:
    for suffixes in ([run.target.url for run in runs], [run.source.name for run in runs],
                     [str(run.source) for run in runs]):
        if len(set(suffixes)) == len(suffixes):
            return suffixes
    return [f"#{position}" for position in range(1, len(runs) + 1)]


def headline_title(result: CaseResult) -> str:
    """A record without `title` still states it on its message's first line: `[check.id] title`."""
    headline = result.message.partition("\n")[0]
    prefix = f"[{result.check}] "
    return headline[len(prefix):] if headline.startswith(prefix) else ""


def unique_anchors(check_ids: list[str]) -> list[str]:
    """Fragment-safe ids; check ids already are, but a results file may hold anything."""
    anchors: list[str] = []
    for check_id in check_ids:
        anchor = re.sub(r"[^A-Za-z0-9_.-]", "-", check_id) or "check"
        if anchor in anchors:
            anchor = f"{anchor}-{len(anchors) + 1}"
        anchors.append(anchor)
    return anchors


def detail_anchor(column: Column, row: Row) -> str:
    return f"{column.anchor}-{row.anchor}"


def message_excerpt(result: CaseResult) -> list[str]:
    """The first lines of the message, without the two the page already shows in full: the headline
    `[check.id] title` (the detail's heading) and `Reproduce: curl …` (the curl below it)."""
    lines = [line for line in result.message.splitlines()
             if not line.startswith((f"[{result.check}] ", "Reproduce: "))]
    shown = [line if len(line) <= LINE_CHARS else f"{line[:LINE_CHARS]}…" for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        shown.append(f"… {len(lines) - MESSAGE_LINES} more lines")
    return shown


def target_facts(column: Column) -> list[tuple[str, str]]:
    target = column.run.target
    return [("version", target.server_version or "unknown"), ("model", target.model or "unknown"),
            ("url", target.url), ("started", target.started or "unknown")]


def counts_text(counts: Counter) -> list[str]:
    """`✗ 4 FAILED · ✓ 40 OK · 3 not run`, worst first like the legend."""
    parts = [f"{OUTCOMES[outcome].symbol} {counts[outcome]} {outcome}" for outcome in OUTCOMES
             if counts[outcome]]
    return parts + ([f"{counts[NOT_RUN]} {NOT_RUN}"] if counts[NOT_RUN] else [])
