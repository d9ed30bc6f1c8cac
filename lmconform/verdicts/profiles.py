"""What each coding agent survives, and what breaks it: its profile, measured from its fault × agent matrix (each
defect of the reference server's catalogue against the real agent, docs/agents.md) and kept in profiles.toml beside
this module, with the version it was measured on.

A run that does not run an agent still grades it, from its profile: each finding of the run on the agent's API is
looked up — first among the known causes (lmconform.verdicts.causes) that say what they do to that agent, then in
the profile, which says what the agent did against the defects that show that finding — and the agent is predicted
to break if any of them broke it, to work with limits if any of them limited it, and to work otherwise. A finding
the matrix never showed is said to be unmeasured: the prediction does not know it.

How a check's effect is measured (tools/agents/matrix.py writes it): the mildest grade of the agent over the defects
whose findings include the check. A check that shows on a defect the agent survived is not, by itself, what breaks
it. So a prediction is never worse than what the agent did on the matrix's own defects; where it is better, the
difference is listed (docs/agents.md, "Predicted and live").
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lmconform.verdicts.causes import Cause, cause_of, words_of
from lmconform.verdicts.records import CaseResult
from lmconform.vocabulary import BREAKS, LIMITED, WORKS, Outcome

FILE = Path(__file__).resolve().parent / "profiles.toml"
SOURCE = "lmconform/verdicts/profiles.toml"
# The grades, mildest first, and the effect of a finding on an agent in the same order.
GRADE_ORDER = (WORKS, LIMITED, BREAKS)
EFFECT_GRADE = {"survives": WORKS, "limits": LIMITED, "breaks": BREAKS}
GRADE_EFFECT = {grade: effect for effect, grade in EFFECT_GRADE.items()}
FINDING = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.NON_STRICT})


@dataclass(frozen=True)
class Profile:
    agent: str  # lmconform's name for it: `claude-code`
    title: str
    version: str  # the version the matrix was measured on
    api: str
    measured: str  # the date
    faults: dict[str, str]  # the agent's grade against each defect of the matrix (`clean`: the clean server)
    checks: dict[str, str]  # the effect of each check's finding on the agent: survives, limits or breaks

    @property
    def label(self) -> str:
        return f"{self.title} {self.version}"


@dataclass(frozen=True)
class Reason:
    """One finding of a run, and what it does to the agent: from a known cause, or from the profile."""

    row: CaseResult
    effect: str  # survives, limits or breaks
    cause: Cause | None = None


@dataclass(frozen=True)
class Prediction:
    profile: Profile
    grade: str
    reasons: tuple[Reason, ...]  # the findings that decide the grade, worst first
    unmeasured: tuple[str, ...]  # checks that failed and that the matrix never showed

    @property
    def basis(self) -> str:
        return f"predicted from {self.profile.label}'s matrix"


def worst(grades: Iterable[str]) -> str:
    return max(grades, key=GRADE_ORDER.index, default=WORKS)


@cache
def agent_profiles() -> dict[str, Profile]:
    """Every agent's profile, by the agent's name; none when the file is missing (an agent never measured)."""
    try:
        data = tomllib.loads(FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: Profile(name, entry["title"], entry["version"], entry["api"], str(entry["measured"]),
                          dict(entry.get("faults", {})), dict(entry.get("checks", {})))
            for name, entry in data.items()}


def predict(profile: Profile, rows: Iterable[CaseResult]) -> Prediction:
    """The agent's predicted grade against a target whose verdicts on the agent's API are `rows` (its own live
    runs' cases left out by the caller)."""
    reasons: list[Reason] = []
    unmeasured: list[str] = []
    for row in rows:
        if Outcome(row.outcome) not in FINDING or row.api != profile.api:
            continue
        cause = cause_of(row.check, row.case, words_of(row.message, row.evidence))
        said = cause.effect_on(profile.agent) if cause is not None else None
        if said is not None:
            reasons.append(Reason(row, said.effect, cause))
        elif row.check in profile.checks:
            reasons.append(Reason(row, profile.checks[row.check]))
        elif row.check not in unmeasured:
            unmeasured.append(row.check)
    reasons.sort(key=lambda reason: (-GRADE_ORDER.index(EFFECT_GRADE[reason.effect]), reason.row.check,
                                     reason.row.case))
    deciding = tuple(reason for reason in reasons if reason.effect != "survives")
    grade = worst(EFFECT_GRADE[reason.effect] for reason in deciding)
    return Prediction(profile, grade, deciding, tuple(sorted(unmeasured)))


def predicted_from_findings(profile: Profile, checks: Iterable[str]) -> str:
    """The grade the profile predicts for a target whose findings on the agent's API are exactly `checks`: what the
    comparison with the matrix computes for each defect, without the words a cause needs."""
    return worst(EFFECT_GRADE[profile.checks[check]] for check in checks if check in profile.checks)
