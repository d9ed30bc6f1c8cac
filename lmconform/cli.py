"""lmconform's tools around the conformance suite: the reference server, the checks, reports, the proxy gate, the bridge.

The reference server and its faults, the checks, fingerprints, snapshot diffs, a run's report and matrices,
recording, the coding agents, the proxy gate, the OpenAPI document of the schemas, the violations the request
schemas yield, and the reference VS Code language-model bridge.

The conformance suite itself runs under pytest (`pytest suites --endpoint URL`), so CI tooling that already
speaks pytest (JUnit XML, HTML reports, selection) works unchanged.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

from lmconform import __version__
from lmconform.command_line import OneLineErrorParser

# The modules that register the commands (each has `register(subparsers)`), in the order `lmconform --help` lists
# them, with the commands each registers. A command line names one command, and only its module is imported: all of
# them together take 0.6 s to import (the suite's runner, the gate, the schemas), which `lmconform bridge`, started
# once per chat request, would pay every time.
COMMAND_MODULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("serve", "faults"), "lmconform.reference.command"),
    (("check",), "lmconform.check_command"),
    (("checks",), "lmconform.run.dry_run"),
    (("fingerprint",), "lmconform.fingerprint"),
    (("snapshots",), "lmconform.snapshots.diff"),
    (("report", "matrix"), "lmconform.report.commands"),
    (("record",), "lmconform.record.server"),
    (("agents",), "lmconform.agents_command"),
    (("gate",), "lmconform.gate.command"),
    (("openapi",), "lmconform.openapi"),
    (("fuzz",), "lmconform.fuzz.listing"),
    (("bridge",), "lmconform.bridge.cli"),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (given the `command` a command line names) of the commands of its module."""
    # Every command's parser is of the top-level parser's class: each says its usage error in one line.
    parser = OneLineErrorParser(prog="lmconform", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--version", action="version", version=f"lmconform {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for names, module in COMMAND_MODULES:
        if command is None or command in names:
            import_module(module).register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    known = {name for names, _ in COMMAND_MODULES for name in names}
    named = argv[0] if argv and argv[0] in known else None  # else argparse's message lists every command
    args = build_parser(named).parse_args(argv)
    try:
        return args.handler(args)
    except BrokenPipeError:
        # The reader went away (`lmconform check | head`): what it did not read is no failure of the target, and
        # Python's flush of stdout at exit must not raise again into a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
