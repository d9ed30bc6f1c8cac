"""The registry of checks.

A check is a function over an `Observed` (one case's exchanges with a target) that yields `Failure`s and `Note`s
(lmconform.vocabulary). Whether a failure fails the run depends on the check's level, which the registry holds,
not on the function; what the check needs to run at all (an upstream, a server profile) is an attribute too, so a
check that cannot apply to a run is not part of it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from lmconform.vocabulary import CHECK_KINDS, Failure, Grade, Level, Note, Requirement, surface_of

if TYPE_CHECKING:
    from lmconform.cases import Case
    from lmconform.checks.observed import Observed

# A check takes the observations of its API's transport (`Observed[StdioExchange, StdioTurn]` for a bridge's): the
# registry holds checks of every transport, and the run gives each only the cases its `applies` accepts.
CheckFunction = Callable[["Observed[Any, Any]"], Iterable[Failure | Note | Grade]]
CheckFunctionT = TypeVar("CheckFunctionT", bound=CheckFunction)
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+){2,}$")


@dataclass(frozen=True)
class Check:
    id: str
    level: Level
    title: str
    ref: str
    applies: Callable[[Case], bool]
    function: CheckFunction
    surface: str  # what part of the API it judges: `chat`, `sse`, `client.void`…, the head of its id
    kind: str = "wire"  # one of CHECK_KINDS (lmconform.vocabulary)
    requires: frozenset[Requirement] = frozenset()  # what the run must have for the check to be part of it
    judges_cut_bodies: bool = False  # judged on an answer cut at the body cap (other checks then have no verdict)
    # Judged when a process the case talks to (a bridge on stdio) exits or stops answering, which leaves the case's
    # other checks with no verdict: for the checks whose property is that it does not.
    judges_lost_process: bool = False
    # Judged on an answer whose connection the server ended before the body did (reset, or closed short of its
    # Content-Length), which leaves the case's other checks with no verdict: for the checks whose property is that it
    # does not.
    judges_broken_answers: bool = False
    # The faults that prove the check can fail: of the reference server's catalogue (lmconform.reference.faults) or,
    # for a bridge's checks, of the reference bridge's (lmconform.bridge.faults). tests/test_fault_catalogue.py
    # holds each to the fault × check table `make catalogue` writes.
    proven_by: tuple[str, ...] = ()

    def run(self, observed: Observed[Any, Any]) -> list[Failure | Note | Grade]:
        return list(self.function(observed))


REGISTRY: dict[str, Check] = {}


def check(id: str, *, level: Level, title: str, ref: str, applies: Callable[[Case], bool],
          proven_by: Iterable[str] = (), requires: Iterable[Requirement] = (), kind: str = "wire",
          judges_cut_bodies: bool = False, judges_lost_process: bool = False,
          judges_broken_answers: bool = False) -> Callable[[CheckFunctionT], CheckFunctionT]:
    """Register a check function under a stable id; a second registration of the same id is an error."""
    if not ID_PATTERN.match(id):
        raise ValueError(f"check id {id!r} is not <surface>.<area>.<property> in lower case")
    if id in REGISTRY:
        raise ValueError(f"check id {id!r} is registered twice")
    if kind not in CHECK_KINDS:
        raise ValueError(f"check {id!r}: kind is one of {', '.join(CHECK_KINDS)}")

    def register(function: CheckFunctionT) -> CheckFunctionT:
        REGISTRY[id] = Check(id=id, level=Level(level), title=title, ref=ref, applies=applies, function=function,
                             surface=surface_of(id), kind=kind, requires=frozenset(map(Requirement, requires)),
                             judges_cut_bodies=judges_cut_bodies, judges_lost_process=judges_lost_process,
                             judges_broken_answers=judges_broken_answers,
                             proven_by=tuple(proven_by))
        return function

    return register


def select(include: Iterable[str] = (), exclude: Iterable[str] = (),
           available: Iterable[Requirement] = ()) -> list[Check]:
    """Checks whose id matches any `include` glob (all when none given) and no `exclude` glob, and whose
    requirements the run meets (`available`), in id order."""
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
