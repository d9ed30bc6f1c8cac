"""The search every source of generated cases shares: generate up to a budget of examples, play each, and shrink the
first one with a finding to the smallest example that still has one.

Settings fit a network target: no deadline (a slow answer is not a flaky test), no example database (a run is
reproduced by its seed, not by files left behind), and every health check off (a target's latency is not the
generator's fault). Without a seed the search is derandomized: the same run sends the same examples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from lmconform.cases import Case
from lmconform.checks.observed import Observed
from lmconform.target import DEFAULT_FUZZ_SHRINK


@dataclass(frozen=True)
class Search:
    """What a search played: the examples that kept every invariant, and the shrunk one that did not (if any)."""

    kept: tuple[Observed, ...]
    finding: Observed | None


class _Found(Exception):
    pass


def search(examples_of: st.SearchStrategy[Case], play: Callable[[Case], Observed],
           has_finding: Callable[[Observed], bool], examples: int, seed: int | None = None,
           shrink_plays: int = DEFAULT_FUZZ_SHRINK) -> Search:
    """Generate up to `examples` cases, play each, and shrink the first one `has_finding` to the smallest, playing
    at most `shrink_plays` more."""
    kept: list[Observed] = []
    found: list[Observed] = []
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
        every_example_keeps_the_invariants()
    except (_Found, Flaky):
        pass  # Flaky: a target that answered the same request differently; the finding stands as observed
    # Hypothesis plays the shrunk example last, so the last finding is the smallest.
    return Search(tuple(kept), found[-1] if found else None)
