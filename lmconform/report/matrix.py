"""The matrix: several runs' results records merged into one page of checks x targets.

This is where an implementer stands, at a glance: one row per check (grouped by surface), one column per target,
each cell the worst outcome of that check over the run's cases, linked to the failing cases further down the page
with their Expected/Actual lines and a curl that reproduces them.

It reads only results records (docs/results-record.md), never the check registry, so it renders records written by other
versions of the suite. Every string it takes from a file is escaped: a model's answer may hold markup.

A verdict that the target's known-verdicts file marks model-dependent (the outcome follows the tokens a model
picked, not what the server does with them) does not decide its cell: the cell shows the other verdicts, with
≈ beside them, and the details list the outcomes such a verdict may take. A stable matrix (`--stable`, the
published one) also leaves out what changes from run to run for the same verdicts (addresses, start times,
counts a model's choices can move, event excerpts, curls), so it changes only when a verdict does.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import PurePath
from urllib.parse import urlsplit

from lmconform.report.target_prose import build_words, exact_version, kind_name
from lmconform.report.timing import rate, seconds, summary
from lmconform.surfaces import surface_rank
from lmconform.verdicts.grades import Line
from lmconform.verdicts.headline import Headline, build_headline
from lmconform.verdicts.records import CaseResult, RunResults
from lmconform.vocabulary import OUTCOME_STYLES, WORST_FIRST, Outcome, surface_of

# Worst first: a cell shows the first of these among its cases.
OUTCOMES = {str(outcome): OUTCOME_STYLES[outcome] for outcome in WORST_FIRST}
RANK = {outcome: rank for rank, outcome in enumerate(OUTCOMES)}


def css_class(outcome: str) -> str:
    return Outcome(outcome).css_class


MESSAGE_LINES = 8  # the level line and the first two failures: Expected, Actual and the offending event
LINE_CHARS = 400  # an Event line can carry a whole body excerpt; the curl reproduces it in full
NOT_RUN = "not run"
NOT_RUN_MEANING = "no case of the run exercised the check"
MODEL_SYMBOL = "≈"
MODEL_MEANING = ("a verdict the model decides, not the server (marked model-dependent in the target's expected "
                 "verdicts): it does not decide the cell; the details say which outcomes it may take")


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
    """The outcomes of one check over one run's cases; the model-dependent ones apart."""

    counts: Counter = field(default_factory=Counter)
    not_passed: list[CaseResult] = field(default_factory=list)
    model_dependent: list[CaseResult] = field(default_factory=list)

    def add(self, result: CaseResult) -> None:
        if result.known is not None and result.known.model_dependent:
            self.model_dependent.append(result)
            return
        self.counts[result.outcome] += 1
        if result.outcome != "OK":
            self.not_passed.append(result)

    @property
    def outcome(self) -> str | None:
        """The worst outcome of the verdicts the server decides; None when the model decides them all."""
        return min(self.counts, key=RANK.__getitem__) if self.counts else None

    @property
    def symbol(self) -> str:
        symbol = OUTCOMES[self.outcome].symbol if self.outcome else ""
        return f"{symbol} {MODEL_SYMBOL}".strip() if self.model_dependent else symbol

    @property
    def has_details(self) -> bool:
        return bool(self.not_passed or self.model_dependent)

    def may_take(self) -> list[str]:
        """The outcomes the model-dependent verdicts may take, worst first."""
        allowed = {outcome for result in self.model_dependent if result.known for outcome in result.known.outcomes}
        return [outcome for outcome in OUTCOMES if outcome in allowed]

    @property
    def not_passed_cases(self) -> list[str]:
        return [result.case for result in self.not_passed]

    def summary(self, stable: bool = False) -> str:
        """`FAILED 1, OK 8 of 9 cases`, worst first; stable: the outcomes alone, since how many cases a check
        judges can follow what a model said (a call, or none)."""
        outcomes = [outcome for outcome in OUTCOMES if self.counts[outcome]]
        model = f"model-dependent ({' or '.join(self.may_take())})" if self.model_dependent else ""
        if stable:
            return ", ".join([*outcomes, *filter(None, [model])])
        parts = [f"{outcome} {self.counts[outcome]}" for outcome in outcomes]
        parts += [f"{len(self.model_dependent)} {model}"] if model else []
        total = sum(self.counts.values()) + len(self.model_dependent)
        return f"{', '.join(parts)} of {total} case{'s' if total != 1 else ''}"


@dataclass(frozen=True)
class Matrix:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    cells: dict[tuple[str, str], Cell]  # (column anchor, check id) -> cell; absent where the check did not run
    stable: bool = False
    headlines: dict[str, Headline] = field(default_factory=dict)  # column anchor -> will it work

    def cell(self, column: Column, row: Row) -> Cell | None:
        return self.cells.get((column.anchor, row.check))

    def surfaces(self) -> list[tuple[str, list[Row]]]:
        return [(surface, list(rows)) for surface, rows in groupby(self.rows, key=lambda row: row.surface)]

    def column_counts(self, column: Column) -> Counter:
        """How many checks the column shows with each outcome, and how many did not run."""
        counts: Counter[str] = Counter()
        for row in self.rows:
            cell = self.cell(column, row)
            counts[(cell.outcome or MODEL_SYMBOL) if cell else NOT_RUN] += 1
        return counts


# --- building ----------------------------------------------------------------------------------------------------

def build_matrix(runs: list[RunResults], stable: bool = False) -> Matrix:
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
    headlines = {column.anchor: build_headline(column.run.results, stable) for column in columns}
    return Matrix(columns=columns, rows=rows, cells=cells, stable=stable, headlines=headlines)


def column_names(runs: list[RunResults]) -> list[str]:
    """Label and server version; runs that share both are told apart by URL (unless a loopback port is all that tells
    them apart), else by the last parts of their files' paths, else by position."""
    names = [" ".join(filter(None, (run.target.label, run.target.server_version))) for run in runs]
    for name in set(names):
        same = [index for index, other in enumerate(names) if other == name]
        if len(same) > 1:
            for index, suffix in zip(same, distinguishing([runs[index] for index in same])):
                names[index] = f"{name} ({suffix})"
    return names


def distinguishing(runs: list[RunResults]) -> list[str]:
    if len({without_loopback_port(run.target.url) for run in runs}) == len(runs):
        return [run.target.url for run in runs]
    # The files' paths, from the fewest last parts that tell them apart: `before/results.json`, `after/results.json`.
    for parts in range(1, max(len(run.source.parts) for run in runs) + 1):
        suffixes = [str(PurePath(*run.source.parts[-parts:])) for run in runs]
        if len(set(suffixes)) == len(suffixes):
            return suffixes
    return [f"#{position}" for position in range(1, len(runs) + 1)]


def without_loopback_port(url: str) -> str:
    """`url` without its port when it is a loopback address: the embedded reference server listens on a free port
    the system picks, so two runs of the same server differ there and nowhere else, which tells nobody which is
    which."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # a record may hold anything
        return url
    return f"{parts.scheme}://{parts.hostname}{parts.path}" if port and is_loopback(parts.hostname) else url


def is_loopback(host: str | None) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


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


def target_facts(column: Column, stable: bool = False) -> list[tuple[str, str]]:
    """What the header of a column says about its target; stable: what stays the same from run to run."""
    target = column.run.target
    if stable:
        return [("server", kind_name(target)), ("version", exact_version(target) or "unknown"),
                ("model", target.model or "unknown"), ("built", build_words(target) or "as packaged")]
    timing = summary(column.run.timing)  # how fast varies from run to run: never in a stable page
    return [("version", exact_version(target) or "unknown"), ("model", target.model or "unknown"),
            ("url", target.url), ("started", target.started or "unknown"),
            ("first byte (median)", seconds(timing["first_byte_s"])),
            ("first token (median)", seconds(timing["first_token_s"])),
            ("tokens/s (median)", rate(timing["tokens_per_s"])), ("longest pause", seconds(timing["longest_gap_s"]))]


def stable_reason(result: CaseResult) -> str:
    """Why a verdict is not OK, in words that stay the same from run to run: the known-verdicts file's reason;
    without one, the check's title alone (what happened may carry ids the server made up)."""
    return result.known.reason if result.known else f"{result.title or result.check} (no reason recorded)"


def counts_text(counts: Counter) -> list[str]:
    """`✗ 4 FAILED · ✓ 40 OK · 3 not run`, worst first like the legend."""
    parts = [f"{OUTCOMES[outcome].symbol} {counts[outcome]} {outcome}" for outcome in OUTCOMES
             if counts[outcome]]
    parts += [f"{MODEL_SYMBOL} {counts[MODEL_SYMBOL]} model-dependent"] if counts[MODEL_SYMBOL] else []
    return parts + ([f"{counts[NOT_RUN]} {NOT_RUN}"] if counts[NOT_RUN] else [])


def headline_grid(matrix: Matrix) -> list[tuple[str, list[tuple[str, dict[str, Line]]]]]:
    """The headline of every column side by side: ("Client", [(name, {column anchor: line})]), then ("Surface",
    …); names in the order the columns first show them."""
    grid = []
    for title, group_of in (("Client", lambda headline: headline.clients),
                            ("Surface", lambda headline: headline.surfaces)):
        names: dict[str, dict[str, Line]] = {}
        for column in matrix.columns:
            for line in group_of(matrix.headlines[column.anchor]):
                names.setdefault(line.name, {})[column.anchor] = line
        if names:
            grid.append((title, list(names.items())))
    return grid


def why_anchor(column: Column, line: Line) -> str:
    return f"why-{column.anchor}-{line.key}"


def model_line(result: CaseResult, stable: bool) -> str:
    """A model-dependent verdict in words: the outcomes it may take, why, and (not stable) what it was this time."""
    known = result.known
    assert known is not None, "a model-dependent verdict comes with its known-verdicts entry"
    text = f"{result.case} may be {' or '.join(known.outcomes)}: {known.reason}"
    return text if stable else f"{text} (this run: {result.outcome})"
