"""Will it work? Each client and each surface of a run graded in the words of what a user meets: **works**, **works
with limits** (the job was done, but something was refused and worked round, retried, or is a known limit of the
target's dialect: each limit named), or **breaks** (the job was not done), or **not offered** (the target lacks the
feature). A grade comes with its reason, the known cause behind it where lmconform knows one, and the way round.

- A client lmconform replays answers through (Void, the SDKs, the VS Code bridge) is graded by its own checks on
  every case it judged: it breaks when it broke on any of them.
- A coding agent run live is graded by what it did (lmconform.verdicts.agents): the answer reached its user, the tool
  ran with the arguments sent, no error shown, the loop bounded; a refusal it worked round is a limit. An agent not
  run is predicted from its profile (lmconform.verdicts.profiles), and the line says so.
- A surface is graded by its checks: it breaks when a MUST broke or a case got no verdict, and works with limits when
  only a SHOULD broke, or when what broke is a known limit of the target's dialect.

Built from results-record rows alone, so that a report rebuilt from the record says what the run said.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from lmconform.verdicts.causes import SOURCE as CAUSES
from lmconform.verdicts.causes import Cause, cause_of, words_of
from lmconform.verdicts.records import CaseResult
from lmconform.vocabulary import BREAKS, LIMITED, NOT_OFFERED, STATUS_STYLE, WORKS, Outcome

# A real client breaks on these (MUST = a real client breaks; ERROR = the target refused, stalled or crashed).
BREAKING = frozenset({Outcome.FAILED, Outcome.ERROR})
LEVEL_RANK = {"MUST": 0, "SHOULD": 1, "INFO": 2}
REASON_CHARS = 220
LIMITS_SHOWN = 3


@dataclass(frozen=True)
class Line:
    """One client or surface: its grade over the cases that exercised it, and why."""

    key: str  # stable and fragment-safe: `client-void-chat`, `surface-tool-calls`, `agent-codex-responses`
    name: str
    status: str
    cases: int  # cases with a verdict (model-dependent verdicts aside, in a stable headline)
    breaking: int  # of those, cases with a FAILED or ERROR verdict
    counts: Counter = field(default_factory=Counter)  # verdicts per outcome
    worst: CaseResult | None = None
    worst_cases: tuple[str, ...] = ()  # the cases on which the worst finding's check did not pass
    model_dependent: int = 0  # verdicts left out because the model, not the server, decides them
    stable: bool = False
    limits: tuple[str, ...] = ()  # each limit of a line that works with limits, named
    cause: Cause | None = None  # the known cause of what broke or limited it
    way_round: str = ""  # the cause's way round, for this client
    expected: str = ""  # how what broke is expected of the target: a known limit of its dialect, or --expect
    basis: str = ""  # for a coding agent: "run live", or "predicted from Claude Code 2.1.332's matrix"
    differs: str = ""  # a live grade the profile did not predict: the prediction, in words
    unmeasured: tuple[str, ...] = ()  # for a prediction: findings the agent's matrix never showed
    said: str = ""  # what happened, where the line says it in its own words rather than by its worst finding

    @property
    def outcome(self) -> Outcome:
        return STATUS_STYLE[self.status][0]

    @property
    def symbol(self) -> str:
        return STATUS_STYLE[self.status][1]

    @property
    def verdict(self) -> str:
        """`✗ breaks`; an agent's says how it was graded: `✓ works (run live)`, `✗ breaks (predicted)`."""
        how = f" ({self.basis.split(' from ')[0]})" if self.basis else ""
        return f"{self.symbol} {self.status}{how}"

    @property
    def why(self) -> str:
        """One line: the worst finding's title and what happened, and on how many cases (the limits, for a line
        that works with limits); empty when all passed. A stable line (the published matrix) gives the
        known-verdicts file's reason and no counts, which a model's choices could move."""
        if self.status == LIMITED and self.limits:
            text = "; ".join(self.limits[:LIMITS_SHOWN]) + (" …" if len(self.limits) > LIMITS_SHOWN else "")
            return _cut(text)
        if self.said:
            return _cut(self.said)
        if self.worst is None:
            return ""
        worst = self.worst
        reason = reason_of(worst, self.stable)
        text = f"{worst.title or worst.check}: {reason}" if reason and reason != worst.title else worst.title
        if not self.stable and self.worst_cases:
            shown = "case" if len(self.worst_cases) == 1 else "cases"
            text = f"{text} ({len(self.worst_cases)} {shown}: {', '.join(self.worst_cases[:2])}" \
                   f"{', …' if len(self.worst_cases) > 2 else ''})"
        return _cut(text)

    @property
    def notes(self) -> list[tuple[str, str]]:
        """What follows the why, each (label, text): the basis of an agent's grade, the known cause, the way round,
        a prediction the live run did not bear out, and findings a prediction could not weigh."""
        notes = []
        if " from " in self.basis:
            notes.append(("basis", self.basis))
        if self.expected:
            notes.append(("expected", f"{self.expected}, which does not fail the run"))
        if self.cause is not None:
            notes.append(("cause", f"{self.cause.title}. {self.cause.cause}"))
        if self.way_round:
            notes.append(("way round", self.way_round))
        if self.differs:
            notes.append(("differs", self.differs))
        if self.unmeasured:
            notes.append(("unmeasured", f"{len(self.unmeasured)} finding{'s' if len(self.unmeasured) > 1 else ''} "
                                        f"its matrix never showed: {', '.join(self.unmeasured[:3])}"
                                        f"{', …' if len(self.unmeasured) > 3 else ''}"))
        return notes


def _cut(text: str) -> str:
    return text if len(text) <= REASON_CHARS else f"{text[:REASON_CHARS - 1]}…"


def fragment(text: str) -> str:
    return "".join(character if character.isalnum() else "-" for character in text.lower()).strip("-")


def reason_of(row: CaseResult, stable: bool) -> str:
    """Why a row is as it is: in a stable line (the published matrix), the reason of the row of the target's file
    that expected it, which reads the same on every run, where the finding's own words may count what differs from
    run to run (the tokens of an agent's request); else the finding's own."""
    if stable and row.known and not row.known.file.startswith(CAUSES):
        return row.known.reason
    return row.reason


def judged_rows(rows: list[CaseResult], stable: bool) -> list[CaseResult]:
    return [row for row in rows if not (stable and row.known and row.known.model_dependent)]


def offered_cases(rows: list[CaseResult]) -> set[str]:
    """The cases of `rows` the target offers: those with a verdict other than UNSUPPORTED."""
    return {row.case for row in rows if row.outcome != Outcome.UNSUPPORTED}


def dialect_limit(row: CaseResult) -> bool:
    """A finding the target is expected to have because its dialect documents it (a known cause's `expected_of`)."""
    return row.known is not None and row.known.file.startswith(CAUSES)


def line_of(key: str, name: str, rows: list[CaseResult], stable: bool, client: str = "") -> Line:
    """A replaying client's or a surface's line: it breaks on a broken MUST or a missing verdict that is not a known
    limit of the target's dialect; works with limits on a SHOULD broken or such a known limit; works otherwise."""
    judged = judged_rows(rows, stable)
    offered = offered_cases(judged)
    breaking = [row for row in judged if row.outcome in BREAKING]
    broken = [row for row in breaking if not dialect_limit(row)]
    limiting = [row for row in breaking if dialect_limit(row)] + [row for row in judged
                                                                   if row.outcome == Outcome.NON_STRICT]
    if judged and not offered:
        status = NOT_OFFERED
    else:
        status = BREAKS if broken else LIMITED if limiting else WORKS
    worst = worst_finding(judged)
    worst_cases = tuple(sorted({row.case for row in judged if worst and row.check == worst.check
                                and row.outcome != Outcome.OK}))
    cause, way_round = cause_and_way_round(broken or limiting, client)
    return Line(key, name, status, len(offered), len({row.case for row in breaking}),
                Counter(row.outcome for row in judged), worst, worst_cases, len(rows) - len(judged), stable,
                limits=tuple(limit_names(limiting)) if status == LIMITED else (), cause=cause, way_round=way_round,
                expected=expected_words(broken) if status == BREAKS else "")


def limit_names(rows: list[CaseResult]) -> list[str]:
    """Each limit once, in words: a known limit of the dialect by its cause, a broken SHOULD by its title."""
    names: list[str] = []
    for row in sorted(rows, key=lambda row: (not dialect_limit(row), row.check, row.case)):
        cause = cause_of(row.check, row.case, words_of(row.message, row.evidence)) if dialect_limit(row) else None
        name = f"a known limit of the target's dialect: {cause.title}" if cause else row.title or row.check
        if name not in names:
            names.append(name)
    return names


def expected_words(rows: list[CaseResult]) -> str:
    """How the breaking findings are expected of the target, when every one of them is: of its dialect (a known
    cause), or by a known-failures file."""
    if not rows or not all(row.known and row.outcome in row.known.outcomes for row in rows):
        return ""
    return "a known limit of the target's dialect" if all(map(dialect_limit, rows)) else \
        "a known failure of the target (--expect)"


def cause_and_way_round(rows: list[CaseResult], client: str = "") -> tuple[Cause | None, str]:
    """The known cause of the first of `rows` (the worst first) that has one, preferring a cause that names
    `client`; and the way round it gives that client, or the first client it names."""
    found = []
    for row in sorted(rows, key=lambda row: -Outcome(row.outcome).severity):
        cause = cause_of(row.check, row.case, words_of(row.message, row.evidence))
        if cause is not None:
            found.append(cause)
    cause = next((cause for cause in found if client and client in cause.clients), found[0] if found else None)
    if cause is None:
        return None, ""
    if client in cause.clients:
        return cause, cause.clients[client].way_round
    named, effect = next(iter(cause.clients.items()))
    return cause, f"for {named}: {effect.way_round}"


def worst_finding(rows: list[CaseResult]) -> CaseResult | None:
    """The most severe verdict that is not OK: then MUST before SHOULD, the check failing on most cases, and the
    first check and case by id, so the same rows always name the same finding."""
    found = [row for row in rows if row.outcome != Outcome.OK]
    if not found:
        return None
    spread = Counter(row.check for row in found)
    return min(found, key=lambda row: (-Outcome(row.outcome).severity, LEVEL_RANK.get(row.level, 3),
                                       -spread[row.check], row.check, row.case))
