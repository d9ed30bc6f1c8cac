"""The report commands, each built from results records alone:

    lmconform report RESULTS.json -o report.html
    lmconform matrix RESULTS.json... -o matrix.html [--markdown matrix.md] [--stable] [--title TITLE]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from lmconform.exit_status import USAGE_ERROR
from lmconform.report.document import write_page
from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import DEFAULT_TITLE, render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.report.run_page import run_page
from lmconform.verdicts.records import RecordError, load_results, load_run


def register(subparsers) -> None:
    """Add `report` and `matrix` to an argparse subparsers object; each handler is in its parser's defaults."""
    report = subparsers.add_parser(
        "report", help="build the HTML report of one run from its results record",
        description="Build the HTML report of one run (will it work, the target, the findings with their exchanges, "
                    "every verdict) from the results record it wrote (--results-json).")
    report.add_argument("results", type=Path, metavar="RESULTS.json", help="a run's results record")
    report.add_argument("-o", "--output", required=True, type=Path, metavar="PATH", help="the HTML page to write")
    report.set_defaults(handler=run_report)

    matrix = subparsers.add_parser(
        "matrix", help="merge results records into one page of checks x targets",
        description="Merge the results records of several runs (--results-json) into one HTML page of "
                    "checks x targets, with the failing cases of each target below it.")
    matrix.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json", help="a run's results record")
    matrix.add_argument("-o", "--output", required=True, type=Path, metavar="PATH", help="the HTML page to write")
    matrix.add_argument("--markdown", type=Path, metavar="PATH",
                        help="also write the matrix as a GitHub-flavoured Markdown table")
    matrix.add_argument("--stable", action="store_true",
                        help="leave out what changes between runs with the same verdicts (addresses, start times, "
                             "case counts, event excerpts, curls): for a matrix kept in version control")
    matrix.add_argument("--title", default=DEFAULT_TITLE, help=f"the page's title (default: {DEFAULT_TITLE!r})")
    matrix.set_defaults(handler=run_matrix)


def run_report(args: argparse.Namespace) -> int:
    return usage_errors_said("report", lambda: write_page(args.output, run_page(load_run(args.results))))


def run_matrix(args: argparse.Namespace) -> int:
    def build() -> None:
        matrix = build_matrix(load_results(args.results), stable=args.stable)
        write_page(args.output, render_html(matrix, args.title))
        if args.markdown:
            write_page(args.markdown, render_markdown(matrix, args.title))

    return usage_errors_said("matrix", build)


def usage_errors_said(command: str, build: Callable[[], None]) -> int:
    """Run `build`; a record that cannot be read or a page that cannot be written is one line and exit status 2."""
    try:
        build()
    except RecordError as error:
        print(f"lmconform {command}: {error}", file=sys.stderr)
        return USAGE_ERROR
    return 0
