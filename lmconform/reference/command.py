"""`lmconform serve` and `lmconform faults`: the reference server as a process of its own, and its catalogue of faults."""

from __future__ import annotations

import argparse
import sys

from lmconform.command_line import PORT, bounded
from lmconform.exit_status import USAGE_ERROR
from lmconform.reference.store import DEFAULT_STORE_SIZE
from lmconform.reference.streams import DEFAULT_PAUSE_S


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


def register(commands: argparse._SubParsersAction) -> None:
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
                            "form's first bytes without their pauses, and sends a close-delimited one in one write)")
    serve.set_defaults(handler=_serve)

    faults = commands.add_parser("faults", help="list the reference server's faults, one line each")
    faults.set_defaults(handler=_faults)
