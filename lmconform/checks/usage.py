"""Token usage adds up, in every answer that reports it, as each API counts it (lmconform.normalize.usage): the total
is the prompt's tokens and the answer's, and the tokens read from a cache or spent reasoning are counted inside
them, not beside them."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.checks.observed import Observed, generation_of
from lmconform.checks.refs import OPENAI_CHAT_USAGE
from lmconform.checks.registry import check
from lmconform.checks.scope import reports_usage
from lmconform.normalize.reading import reading
from lmconform.normalize.usage import TokenCounts, token_counts
from lmconform.vocabulary import Failure, Level, NotApplicable


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _wrong(counts: TokenCounts) -> tuple[str, str] | None:
    """(expected, actual) for the first rule the counts break; None when they add up. Counts that are not
    integers are the schema checks' to report: there is nothing to add up."""
    names = counts.fields
    if not (_count(counts.prompt) and _count(counts.completion)):
        return None
    if _count(counts.total) and counts.total != counts.prompt + counts.completion:
        return (f"{names.total} = {names.prompt} + {names.completion} = {counts.prompt + counts.completion}",
                f"{names.total} {counts.total}")
    if _count(counts.cached) and counts.cached > counts.prompt:
        return f"cached tokens ≤ {names.prompt} ({counts.prompt})", f"{counts.cached} cached"
    if _count(counts.reasoning) and counts.reasoning > counts.completion:
        return f"reasoning tokens ≤ {names.completion} ({counts.completion})", f"{counts.reasoning} reasoning"
    return None


@check("generation.usage.adds_up", level=Level.MUST, applies=reports_usage, ref=OPENAI_CHAT_USAGE,
       title="usage adds up: total = prompt + completion, cached ≤ prompt, reasoning ≤ completion",
       proven_by=("usage-total-wrong",))
def adds_up(observed: Observed) -> Iterator[Failure]:
    # MUST: clients and proxies bill and budget by these numbers (LiteLLM's tests assert the sum); a total that is
    # not the sum is counted one way by one and another way by the next.
    fields = reading(observed.case.api).usage
    judged = 0
    for exchange in [observed.exchange, *observed.paired.values()]:
        if fields is None or not exchange.succeeded:
            continue
        end = generation_of(observed.case.api, exchange).end
        counts = token_counts(end.usage, fields) if end is not None else None
        if counts is None:
            continue
        judged += 1
        wrong = _wrong(counts)
        if wrong is not None:
            yield Failure(*wrong, str(end.source) if end is not None else "")
    if not judged:
        raise NotApplicable("no answer reports usage")
