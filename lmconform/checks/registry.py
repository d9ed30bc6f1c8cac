"""The registry of checks, and the values a check produces.

A check is a function over an `Observed` (one case's exchange with a target) that yields `Failure`s. Whether a
failure fails the run depends on the check's level, which the registry holds, not on the function.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lmconform.cases import Case
    from lmconform.checks.observed import Observed


class Level(StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    INFO = "INFO"


class Outcome(StrEnum):
    OK = "OK"
    FAILED = "FAILED"  # a MUST was broken
    NON_STRICT = "NON-STRICT"  # a SHOULD was broken
    INFO = "INFO"  # an INFO-level check found something worth reporting
    UNSUPPORTED = "UNSUPPORTED"  # the target lacks the feature the case exercises
    ERROR = "ERROR"  # no verdict: refused, timed out, crashed


# What a finding of a check at each level turns into.
FINDING_OUTCOME = {Level.MUST: Outcome.FAILED, Level.SHOULD: Outcome.NON_STRICT, Level.INFO: Outcome.INFO}


@dataclass(frozen=True)
class Failure:
    """One way the observation broke the check. `evidence` is the offending raw event or body excerpt."""

    expected: str
    actual: str
    evidence: str = ""


@dataclass(frozen=True)
class Note:
    """What the target did, where the spec leaves a choice: reported beside the verdict, never a finding."""

    text: str


class NotApplicable(Exception):
    """Raised by a check whose subject is absent from this answer (no tool call to judge, say)."""


class Unsupported(Exception):
    """Raised by a check when the target does not offer the feature the case exercises."""


CheckFunction = Callable[["Observed"], Iterable[Failure | Note]]
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+){2,}$")


@dataclass(frozen=True)
class Check:
    id: str
    level: Level
    title: str
    ref: str
    applies: Callable[["Case"], bool]
    function: CheckFunction
    requires: frozenset[str] = frozenset()  # run options the check needs, e.g. "upstream" (--upstream)

    @property
    def surface(self) -> str:
        """The first part of the id (`client.void` counts as one surface)."""
        head, rest = self.id.split(".", 1)
        return f"{head}.{rest.split('.', 1)[0]}" if head == "client" else head

    def run(self, observed: "Observed") -> list[Failure | Note]:
        return list(self.function(observed))


REGISTRY: dict[str, Check] = {}


def check(id: str, *, level: Level, title: str, ref: str, applies: Callable[["Case"], bool],
          requires: Iterable[str] = ()):
    """Register a check function under a stable id; a second registration of the same id is an error."""
    if not ID_PATTERN.match(id):
        raise ValueError(f"check id {id!r} is not <surface>.<area>.<property> in lower case")
    if id in REGISTRY:
        raise ValueError(f"check id {id!r} is registered twice")

    def register(function: CheckFunction) -> CheckFunction:
        REGISTRY[id] = Check(id=id, level=Level(level), title=title, ref=ref, applies=applies, function=function,
                             requires=frozenset(requires))
        return function

    return register


def select(include: Iterable[str] = (), exclude: Iterable[str] = (), available: Iterable[str] = ()) -> list[Check]:
    """Checks whose id matches any `include` glob (all when none given) and no `exclude` glob, and whose required
    run options are `available`, in id order."""
    include, exclude, available = list(include), list(exclude), set(available)
    chosen = []
    for check_id in sorted(REGISTRY):
        if not REGISTRY[check_id].requires <= available:
            continue
        if include and not any(fnmatch.fnmatchcase(check_id, pattern) for pattern in include):
            continue
        if any(fnmatch.fnmatchcase(check_id, pattern) for pattern in exclude):
            continue
        chosen.append(REGISTRY[check_id])
    return chosen


def unmatched_patterns(patterns: Iterable[str]) -> Iterator[str]:
    """Globs that select no registered check: almost always a typo, reported as a usage error."""
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(check_id, pattern) for check_id in REGISTRY):
            yield pattern
