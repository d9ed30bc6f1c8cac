"""The headline in a CI job's summary: GitHub Actions shows the Markdown a step appends to `$GITHUB_STEP_SUMMARY`
on the run's page, so a proxy's maintainer reads "will it work" there without opening an artifact."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

from lmconform.report.headline import headline_markdown
from lmconform.report.markdown import md
from lmconform.report.target_prose import describe
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.records import RecordError, results_of
from lmconform.vocabulary import WORST_FIRST

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"  # GitHub Actions shows Markdown appended to this file on the run's page


def step_summary(record: dict) -> str:
    """The Markdown of one run: a title, the target in a sentence, the two headline tables, the tally."""
    results = results_of(record)
    counts = Counter(row.outcome for row in results.results)
    tally = " · ".join(f"{counts[outcome]} {outcome}" for outcome in WORST_FIRST if counts[outcome]) or "no verdicts"
    lines = [f"### lmconform: will it work with {md(results.target.label)}?", "", md(describe(results.target).sentence),
             "", *headline_markdown(build_headline(results.results)), "", f"Verdicts: {tally}.", ""]
    return "\n".join(lines) + "\n"


def append_step_summary(record: dict) -> None:
    """The run's summary appended to the CI job's, where there is one (a record that cannot be read is said on
    stderr, never fatal)."""
    if os.environ.get(STEP_SUMMARY):
        try:
            append_markdown(step_summary(record))
        except RecordError as error:
            print(f"lmconform: cannot append the summary to {os.environ[STEP_SUMMARY]}: {error}", file=sys.stderr)


def append_markdown(text: str) -> None:
    """`text` appended to the CI job's summary, where there is one, as GitHub asks of every step; a summary that
    cannot be written is said on stderr, never fatal."""
    path = os.environ.get(STEP_SUMMARY)
    if not path:
        return
    try:
        with Path(path).open("a", encoding="utf-8") as summary:
            summary.write(text)
    except OSError as error:
        print(f"lmconform: cannot append the summary to {path}: {error}", file=sys.stderr)
