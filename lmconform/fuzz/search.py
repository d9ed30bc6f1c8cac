"""The search every source of generated requests shares: generate up to a budget of examples, play each, and shrink
the first one with a finding to the smallest example that still has one; and what such a source gives the run
(`searched`: the examples of a case, lmconform.source).

Settings fit a network target: no deadline (a slow answer is not a flaky test), no example database (a run is
reproduced by its seed, not by files left behind), and every health check off (a target's latency is not the
generator's fault). Without a seed the search is derandomized: the same run sends the same examples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky, Unsatisfiable

from lmconform.cases import Case
from lmconform.cases.writer import save_finding
from lmconform.checks.evaluate import judged
from lmconform.checks.observed import AnyObserved
from lmconform.checks.registry import Check
from lmconform.fuzz.draws import independent_of_imports
from lmconform.settings import DEFAULT_FUZZ_SHRINK
from lmconform.source import SourceContext
from lmconform.vocabulary import Outcome


@dataclass(frozen=True)
class Search:
    """What a search played: the examples that kept every invariant, and the shrunk one that did not (if any)."""

    kept: tuple[AnyObserved, ...]
    finding: AnyObserved | None


class _Found(Exception):
    pass


def search(examples_of: st.SearchStrategy[Case], play: Callable[[Case], AnyObserved],
           has_finding: Callable[[AnyObserved], bool], examples: int, seed: int | None = None,
           shrink_plays: int = DEFAULT_FUZZ_SHRINK) -> Search:
    """Generate up to `examples` cases, play each, and shrink the first one `has_finding` to the smallest, playing
    at most `shrink_plays` more."""
    kept: list[AnyObserved] = []
    found: list[AnyObserved] = []
    shrinking = [0]  # requests sent since the first finding
    if examples <= 0:
        return Search((), None)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              phases=(Phase.generate, Phase.shrink),  # no explaining phase: it replays the finding many times
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False)
    @given(examples_of)
    def every_example_keeps_the_invariants(example: Case) -> None:
        if found:
            if shrinking[0] >= shrink_plays:
                # The budget is spent: nothing more is sent, so no later candidate is smaller; the smallest is
                # still a finding when Hypothesis replays it last.
                if example.body == found[-1].case.body:
                    raise _Found
                return
            shrinking[0] += 1
        generated = {**example.provenance.get("generated", {}), "example": len(kept) + len(found) + shrinking[0]}
        observed = play(replace(example, provenance={**example.provenance, "generated": generated}))
        if has_finding(observed):
            found.append(observed)
            raise _Found
        if not found:
            kept.append(observed)

    if seed is not None:
        every_example_keeps_the_invariants = hypothesis_seed(seed)(every_example_keeps_the_invariants)
    try:
        with independent_of_imports():
            every_example_keeps_the_invariants()
    except (_Found, Flaky):
        pass  # Flaky: a target that answered the same request differently; the finding stands as observed
    except Unsatisfiable:
        pass  # no example could be drawn (a violation no generated body can hold): nothing was sent
    # Hypothesis plays the shrunk example last, so the last finding is the smallest.
    return Search(tuple(kept), found[-1] if found else None)


# What a search of generated cases shrinks towards: a finding at these outcomes.
SHRUNK_OUTCOMES = frozenset({Outcome.FAILED, Outcome.NON_STRICT})


class FindingOf:
    """Whether a generated example has a finding: judged by every check that applies and needs nothing of the run,
    selected or not (what a search sends never depends on selection). Once one has, shrinking looks for the same
    finding only: the checks that failed first, which keeps each step of shrinking cheap and the shrunk example about
    the same defect."""

    def __init__(self, checks: Iterable[Check]) -> None:
        self.checks = [check for check in checks if not check.requires]

    def __call__(self, observed: AnyObserved) -> bool:
        failing = [check for check in self.checks if check.applies(observed.case)
                   and (verdict := judged(check, observed)) is not None and verdict.outcome in SHRUNK_OUTCOMES]
        if failing and len(failing) < len(self.checks):
            self.checks = failing
        return bool(failing)


def searched(case: Case, context: SourceContext, name: str, search_with: Callable[..., Search],
             describe: Callable[[AnyObserved], str]) -> list[AnyObserved]:
    """The examples a source of generated requests (called `name`, searching with `search_with` and describing an
    example with `describe`) gives for `case`: those that kept every invariant, and the shrunk one that did not; none
    when the run's settings leave the source or the case's mode out."""
    settings = context.settings
    if name not in settings.fuzz_sources or settings.fuzz_mode not in ("both", "negative" if case.invalid else "positive"):
        return []

    def play_example(example: Case) -> AnyObserved:
        observed = context.play(example)
        observed.example = describe(observed)
        return observed

    found = search_with(case, play_example, FindingOf(context.checks), settings.fuzz_examples, settings.fuzz_seed,
                        settings.fuzz_shrink)
    if found.finding is not None and settings.fuzz_save:
        saved = save_finding(found.finding.case, Path(settings.fuzz_save))
        found.finding.example += f"\nSaved as the case {saved}" if saved else f"\nNot saved under {settings.fuzz_save}"
        found.finding.judged.clear()  # judged again when asked, with where it was saved
    return [*found.kept, *([found.finding] if found.finding else [])]
