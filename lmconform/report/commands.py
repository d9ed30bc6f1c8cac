"""The report commands, each built from results records alone:

    lmconform report RESULTS.json [-o report.html]
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
    report.add_argument("results", type=Path, metavar="RESULTS.json",
                        help="a run's results record (results.json, or results.json.gz)")
    report.add_argument("-o", "--output", type=Path, metavar="PATH",
                        help="the HTML page to write (default: beside the record, named after it: results.html)")
    report.set_defaults(handler=run_report)

    matrix = subparsers.add_parser(
        "matrix", help="merge results records into one page of checks x targets",
        description="Merge the results records of several runs (--results-json) into one HTML page of "
                    "checks x targets, with the failing cases of each target below it.")
    matrix.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json",
                        help="a run's results record (results.json, or results.json.gz)")
    matrix.add_argument("-o", "--output", required=True, type=Path, metavar="PATH", help="the HTML page to write")
    matrix.add_argument("--markdown", type=Path, metavar="PATH",
                        help="also write the matrix as a GitHub-flavoured Markdown table")
    matrix.add_argument("--stable", action="store_true",
                        help="leave out what changes between runs with the same verdicts (addresses, start times, "
                             "case counts, event excerpts, curls): for a matrix kept in version control")
    matrix.add_argument("--title", default=DEFAULT_TITLE, help=f"the page's title (default: {DEFAULT_TITLE!r})")
    matrix.set_defaults(handler=run_matrix)


def run_report(args: argparse.Namespace) -> int:
    output = args.output or page_beside(args.results)

    def build() -> list[Path]:
        write_page(output, run_page(load_run(args.results)))
        return [output]

    return usage_errors_said("report", build)


def page_beside(record: Path) -> Path:
    """The page `lmconform report` writes when not told where: beside the record, named after it (results.json and
    results.json.gz give results.html), never the record itself."""
    page = Path(str(record).removesuffix(".gz")).with_suffix(".html")
    return page if page != record else record.with_name(f"{record.name}.html")


def run_matrix(args: argparse.Namespace) -> int:
    def build() -> list[Path]:
        matrix = build_matrix(load_results(args.results), stable=args.stable)
        write_page(args.output, render_html(matrix, args.title))
        if args.markdown:
            write_page(args.markdown, render_markdown(matrix, args.title))
        return [args.output, *([args.markdown] if args.markdown else [])]

    return usage_errors_said("matrix", build)


def usage_errors_said(command: str, build: Callable[[], list[Path]]) -> int:
    """Run `build` and say what it wrote; a record that cannot be read or a page that cannot be written is one line
    and exit status 2."""
    try:
        written = build()
    except RecordError as error:
        print(f"lmconform {command}: {error}", file=sys.stderr)
        return USAGE_ERROR
    print(f"Wrote {', '.join(map(str, written))}")
    return 0
