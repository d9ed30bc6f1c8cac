"""`lmconform checks [--case ID]`: what a run would judge, before anything is sent.

Without `--case`, every registered check: its id, level, title and the public source of its rule. With `--case`,
the checks that judge that case, decided from the case alone as a run decides it (a check that is part of a run
only when the run has something, an upstream or a profile, says when).
"""

from __future__ import annotations

import argparse
import difflib
import sys

from lmconform.api_table import APIS
from lmconform.cases import Case, CaseError, load_cases
from lmconform.checks import REGISTRY, Check
from lmconform.exit_status import USAGE_ERROR
from lmconform.run.run import judging
from lmconform.vocabulary import Requirement

# When a check that requires something of the run is part of it.
ONLY = {
    Requirement.UPSTREAM: "with --upstream",
    Requirement.LMSTUDIO_PROFILE: "with --profile lmstudio",
    Requirement.REFERENCE_PROFILE: "against the embedded reference server",
    Requirement.BRIDGE_STRICT: "with --bridge-profile strict, the default",
    Requirement.BRIDGE_SYMPOSIUM: "with --bridge-profile symposium",
}


def register(subparsers) -> None:
    """Add `checks` to an argparse subparsers object; the handler is in the parser's defaults as `handler`."""
    parser = subparsers.add_parser(
        "checks", help="list the checks (id, level, title, rule), or those that judge one case",
        description="List every check with its level, title and the public source of its rule; with --case, only "
                    "the checks that judge that case, as a run would choose them. Nothing is sent.")
    parser.add_argument("--case", metavar="ID", help="a case id, <api>/<slug>: chat/void-weather-tool")
    parser.set_defaults(handler=list_checks)


def list_checks(args: argparse.Namespace) -> int:
    checks = sorted(REGISTRY.values(), key=lambda check: check.id)
    if args.case:
        try:
            case = find_case(args.case)
        except CaseError as error:
            print(f"lmconform checks: {error}", file=sys.stderr)
            return USAGE_ERROR
        checks = judging(checks, case)
        print(f"{case.id}: {len(checks)} checks judge this case")
    for line in check_lines(checks):
        print(line)
    return 0


def find_case(case_id: str) -> Case:
    """The shipped case of this id; a CaseError naming the closest ids when there is none."""
    api = case_id.partition("/")[0]
    cases = {case.id: case for case in load_cases(api)} if api in APIS else {}
    if case_id in cases:
        return cases[case_id]
    every = [case.id for name in APIS for case in load_cases(name)]
    close = difflib.get_close_matches(case_id, every, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else " (a case id is <api>/<slug>: chat/void-weather-tool)"
    raise CaseError(f"no case {case_id!r}{hint}")


def check_lines(checks: list[Check]) -> list[str]:
    """One line per check: id, level, title, rule, and when it is part of a run, if not always."""
    width = max((len(check.id) for check in checks), default=0)
    lines = []
    for check in checks:
        only = ", ".join(ONLY[requirement] for requirement in sorted(check.requires))
        lines.append(f"{check.id:<{width}}  {check.level:<6}  {check.title}  [{check.ref}]"
                     + (f"  (only {only})" if only else ""))
    return lines
