"""`lmconform fuzz --list-violations API`: every violation the request schema of an API yields — the constraint it
breaks (where the schema states it), the level at which a server must refuse it, and the facts of docs/schemas.md
the constraint rests on; and the same list as the tables of docs/schemas.md ("Constraints of the requests"), which
`python -m tools.constraints` writes from the schemas and a test compares."""

from __future__ import annotations

import argparse
import json
import sys

from lmconform.api_table import APIS
from lmconform.exit_status import USAGE_ERROR
from lmconform.fuzz.derived import SENT_LEVELS
from lmconform.schemas import PROFILE_OVERLAYS
from lmconform.schemas.constraints import Constraint, constraints, request_apis

FACTS_PAGE = "docs/schemas.md"


def rule(constraint: Constraint) -> str:
    """The constraint as the schema states it: `maximum 2`, `enum ["none", "auto"]`, `required`."""
    if constraint.keyword in ("required", "additionalProperties"):
        return {"required": "required", "additionalProperties": "no other members"}[constraint.keyword]
    argument = list(constraint.argument) if isinstance(constraint.argument, tuple) else constraint.argument
    return f"{constraint.keyword} {json.dumps(argument, ensure_ascii=False)}"


def member(constraint: Constraint) -> str:
    """The member the constraint is on; a required one's own name."""
    if constraint.keyword != "required":
        return constraint.member
    return f"{constraint.member}.{constraint.argument}" if constraint.path else constraint.argument


def constraints_markdown() -> str:
    """The constraints of every request schema, a table per API, as docs/schemas.md lists them."""
    parts = []
    for api in request_apis():
        entry = APIS[api]
        parts += [f"#### `{entry.method} {entry.path}` ({api}/{entry.schemas['request']})", "",
                  "| member | constraint | level | facts | where |", "|---|---|---|---|---|"]
        for constraint in constraints(api):
            rule_text = rule(constraint).replace("|", "\\|")
            parts.append(f"| `{member(constraint)}` | {rule_text} | {constraint.level.value} | "
                         f"{', '.join(constraint.facts)} | `{constraint.location}` |")
        parts.append("")
    return "\n".join(parts)


def _list(args: argparse.Namespace) -> int:
    api = args.list_violations
    if api not in request_apis():
        print(f"lmconform fuzz: {api!r} has no request schema (those that do: {', '.join(request_apis())})",
              file=sys.stderr)
        return USAGE_ERROR
    for constraint in constraints(api, args.profile):
        sent = "" if constraint.level in SENT_LEVELS else "  (listed, not sent: the spec leaves it open)"
        print(f"{constraint.level.value:<6} {constraint.name}{sent}")
        print(f"       breaks {rule(constraint)} at {constraint.location}; facts {', '.join(constraint.facts)} "
              f"({FACTS_PAGE})")
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("fuzz", help="what the generated requests of an API are made of")
    parser.add_argument("--list-violations", metavar="API", required=True,
                        help="print every violation the API's request schema yields: the constraint each breaks, "
                             "its level and its source")
    parser.add_argument("--profile", choices=[name for name in PROFILE_OVERLAYS if name],
                        help="the schemas as this profile reads them (lmstudio: LM Studio's dialect)")
    parser.set_defaults(handler=_list)
    return parser
