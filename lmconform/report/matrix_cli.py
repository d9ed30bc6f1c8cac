"""`lmconform matrix RESULTS.json... -o matrix.html [--markdown matrix.md] [--stable] [--title TITLE]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lmconform.exit_status import USAGE_ERROR
from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import DEFAULT_TITLE, render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.report.records import MatrixError, load_results


def register(subparsers) -> argparse.ArgumentParser:
    """Add `matrix` to an argparse subparsers object; the handler is in the parser's defaults as `handler`."""
    parser = subparsers.add_parser(
        "matrix", help="merge results records into one page of checks x targets",
        description="Merge the results records of several runs (--results-json) into one HTML page of "
                    "checks x targets, with the failing cases of each target below it.")
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json", help="a run's results record")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="PATH", help="the HTML page to write")
    parser.add_argument("--markdown", type=Path, metavar="PATH",
                        help="also write the matrix as a GitHub-flavoured Markdown table")
    parser.add_argument("--stable", action="store_true",
                        help="leave out what changes between runs with the same verdicts (addresses, start times, "
                             "case counts, event excerpts, curls): for a matrix kept in version control")
    parser.add_argument("--title", default=DEFAULT_TITLE, help=f"the page's title (default: {DEFAULT_TITLE!r})")
    parser.set_defaults(handler=run_matrix)
    return parser


def run_matrix(args: argparse.Namespace) -> int:
    try:
        matrix = build_matrix(load_results(args.results), stable=args.stable)
        write_text(args.output, render_html(matrix, args.title))
        if args.markdown:
            write_text(args.markdown, render_markdown(matrix, args.title))
    except MatrixError as error:
        print(f"lmconform matrix: {error}", file=sys.stderr)
        return USAGE_ERROR
    return 0


def write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise MatrixError(f"{path}: cannot write: {error.strerror or error}") from None
