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

from lmconform import fingerprint
from lmconform.bridge.cli import register as register_bridge
from lmconform.check_command import register as register_check
from lmconform.command_line import PORT, bounded
from lmconform.exit_status import USAGE_ERROR
from lmconform.fuzz.listing import register as register_fuzz
from lmconform.gate import register as register_gate
from lmconform.openapi import register as register_openapi
from lmconform.record import register as register_record
from lmconform.record.agents import register as register_agents
from lmconform.reference.store import DEFAULT_STORE_SIZE
from lmconform.reference.streams import DEFAULT_PAUSE_S
from lmconform.report.commands import register as register_reports
from lmconform.run.dry_run import register as register_checks
from lmconform.snapshots import diff as snapshots_diff


def _serve(args: argparse.Namespace) -> int:
    from lmconform.reference.faults import parse_faults
    from lmconform.reference.server import serve_forever

    try:
        faults = parse_faults(args.fault)
    except ValueError as error:
        print(f"lmconform serve: {error}", file=sys.stderr)
        return USAGE_ERROR
    try:
        serve_forever(args.host, args.port, faults, store_size=args.store_size, stream_pause=args.stream_pause)
    except OSError as error:
        print(f"lmconform serve: cannot listen on {args.host}:{args.port}: {error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def _faults(args: argparse.Namespace) -> int:
    from lmconform.reference.faults import FAULTS

    width = max(map(len, FAULTS))
    for fault in FAULTS.values():
        print(f"{fault.name:<{width}}  {fault.summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lmconform", description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the LM Studio-like reference server")
    serve.add_argument("--port", type=PORT, required=True, help="0: any free port")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--fault", action="append", default=[], metavar="NAME",
                       help="reproduce this defect (repeatable); also per request under /faults/NAME[,NAME]/v1/")
    serve.add_argument("--store-size", type=bounded(int, 1), default=DEFAULT_STORE_SIZE, metavar="N",
                       help=f"responses kept for previous_response_id, least recently used evicted "
                            f"(default {DEFAULT_STORE_SIZE})")
    serve.add_argument("--stream-pause", type=bounded(float, 0, 60), default=DEFAULT_PAUSE_S, metavar="SECONDS",
                       help="in a generated wire form (/streams/FORM/v1/ or lmconform-stream=FORM in a request), the "
                            "pause after a write that splits a character or a CRLF pair, so that a reader gets it "
                            f"as a TCP segment of its own (default {DEFAULT_PAUSE_S:g}; 0 also drips a `drip` "
                            "form's first bytes without their pauses)")
    serve.set_defaults(handler=_serve)

    faults = commands.add_parser("faults", help="list the reference server's faults, one line each")
    faults.set_defaults(handler=_faults)

    register_check(commands)
    register_checks(commands)
    fingerprint.register(commands)
    snapshots_diff.register(commands)
    register_reports(commands)
    register_record(commands)
    register_agents(commands)
    register_gate(commands)
    register_openapi(commands)
    register_fuzz(commands)
    register_bridge(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except BrokenPipeError:
        # The reader went away (`lmconform check | head`): what it did not read is no failure of the target, and
        # Python's flush of stdout at exit must not raise again into a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
