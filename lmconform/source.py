"""What a source of examples is: the one extension point for what a run plays for a case.

A case that names no source is played as it is written (once, or K times with --repeat). A case that names one
(`"source": "chains"`) is judged on the examples that source makes of it: generated chain programs, generated
requests, answers in generated wire forms, or any other way of getting exchanges with the target. The run asks every
source the same four things, and nothing else about it:

- `takes_part(case, settings)`: whether the case is part of a run with these settings at all (the streams source's
  cases are only with --upstream-fuzz, a coding agent's only when the run runs that agent);
- `representatives(case)`: examples that hold every kind of step it makes, from which the run decides, before
  anything is sent, which checks judge the case;
- `examples(case, context)`: the observations to judge. A source sends what it makes through `context.play` (the
  run's transport, target and upstream, with what the run knows of the case's feature), or as the case is written
  through `context.written`, and reads the run's target and settings from `context`;
- `judged(check, observed)`: a check's verdict on one of its observations (most sources give the check's own).

A source is any object or module that answers these (lmconform/fuzz/chains.py, requests.py, streams.py and agents.py
are four); adding one is that and a line in lmconform.run.sources.SOURCES.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from lmconform.cases import Case
from lmconform.checks.evaluate import Verdict
from lmconform.checks.observed import AnyObserved
from lmconform.checks.registry import Check
from lmconform.settings import RunSettings
from lmconform.target import Target


@dataclass(frozen=True)
class SourceContext:
    """What a source is given to make the examples of one case."""

    target: Target
    upstream: Target | None
    settings: RunSettings
    play: Callable[[Case], AnyObserved]  # one example sent to the target (and the upstream, if any)
    written: Callable[[Case], list[AnyObserved]]  # a case played as it is written, once or K times
    checks: tuple[Check, ...]  # every check the run could hold the target to, selected or not


class Source(Protocol):
    def takes_part(self, case: Case, settings: RunSettings) -> bool: ...

    def representatives(self, case: Case) -> list[Case]: ...

    def examples(self, case: Case, context: SourceContext) -> list[AnyObserved]: ...

    def judged(self, check: Check, observed: AnyObserved) -> Verdict | None: ...
