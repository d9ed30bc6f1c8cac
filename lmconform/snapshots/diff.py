"""`lmconform snapshots diff A B`: which cases' answers changed shape between two snapshot folders.

    lmconform snapshots diff fixtures/snapshots/lmstudio-0.3.28 fixtures/snapshots/lmstudio-0.3.29
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterator
from pathlib import Path

IDENTICAL = 0
DIFFERENT = 1
MISSING_FOLDER = 2
CONTEXT_LINES = 3


def shape_diff(old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff of two shapes as stored (indented JSON)."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), old_label, new_label, n=CONTEXT_LINES,
                                 lineterm="")
    return "\n".join(lines)


def _shapes(folder: Path) -> dict[str, str]:
    """Case id (`<api>/<slug>`) -> stored shape."""
    return {path.relative_to(folder).with_suffix("").as_posix(): path.read_text(encoding="utf-8")
            for path in folder.rglob("*.json")}


def diff_folders(old: Path, new: Path) -> Iterator[tuple[str, str, str]]:
    """(case id, "added" | "removed" | "changed", diff) for every case whose shape differs, by case id."""
    before, after = _shapes(old), _shapes(new)
    for case in sorted(before.keys() | after.keys()):
        if case not in before:
            yield case, "added", ""
        elif case not in after:
            yield case, "removed", ""
        elif before[case] != after[case]:
            yield case, "changed", shape_diff(before[case], after[case], f"{old.name}/{case}.json",
                                              f"{new.name}/{case}.json")


def _diff(args: argparse.Namespace) -> int:
    old, new = Path(args.a), Path(args.b)
    for folder in (old, new):
        if not folder.is_dir():
            print(f"lmconform snapshots diff: no snapshot folder at {folder}", file=sys.stderr)
            return MISSING_FOLDER
    status = IDENTICAL
    for case, change, diff in diff_folders(old, new):
        status = DIFFERENT
        print(f"{change} {case}")
        if diff:
            print(diff)
    return status


def register(subparsers: argparse._SubParsersAction) -> None:
    """`snapshots diff A B` under the `lmconform` command."""
    snapshots = subparsers.add_parser("snapshots", help="work with shape snapshots (fixtures/snapshots/)")
    commands = snapshots.add_subparsers(dest="snapshots_command", required=True, metavar="COMMAND")
    diff = commands.add_parser("diff", help="cases added, removed or changed in shape from folder A to folder B",
                               description="Exit status: 0 when identical, 1 when shapes differ, 2 when a folder "
                                           "is missing.")
    diff.add_argument("a", metavar="A", help="snapshot folder, e.g. fixtures/snapshots/lmstudio-0.3.28")
    diff.add_argument("b", metavar="B", help="snapshot folder, e.g. fixtures/snapshots/lmstudio-0.3.29")
    diff.set_defaults(handler=_diff)
