"""The headline in a CI job's summary: GitHub Actions shows the Markdown a step appends to `$GITHUB_STEP_SUMMARY`
on the run's page, so a proxy's maintainer reads "will it work" there without opening an artifact."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from lmconform.report.headline import headline_markdown
from lmconform.report.markdown import md
from lmconform.report.target_prose import describe
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.records import RecordError, results_of
from lmconform.vocabulary import WORST_FIRST


def step_summary(record: dict) -> str:
    """The Markdown of one run: a title, the target in a sentence, the two headline tables, the tally."""
    results = results_of(record)
    counts = Counter(row.outcome for row in results.results)
    tally = " · ".join(f"{counts[outcome]} {outcome}" for outcome in WORST_FIRST if counts[outcome]) or "no verdicts"
    lines = [f"### lmconform: will it work with {md(results.target.label)}?", "", md(describe(results.target).sentence),
             "", *headline_markdown(build_headline(results.results)), "", f"Verdicts: {tally}.", ""]
    return "\n".join(lines) + "\n"


def append_step_summary(path: Path, record: dict) -> None:
    """Appended, as GitHub asks of every step; a summary that cannot be written is said on stderr, never fatal."""
    try:
        text = step_summary(record)
        with path.open("a", encoding="utf-8") as summary:
            summary.write(text)
    except (OSError, RecordError) as error:
        print(f"lmconform: cannot append the summary to {path}: {error}", file=sys.stderr)
