"""`lmconform record --listen PORT --to FOLDER`: the recording endpoint on a loopback port."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from lmconform.api_table import APIS
from lmconform.command_line import PORT
from lmconform.exit_status import USAGE_ERROR
from lmconform.record.recorder import Recorder
from lmconform.record.upstream import Upstream
from lmconform.reference import ReferenceServer


class RecordingServer(ReferenceServer):
    """The recording endpoint on a loopback port, in a background thread, started and stopped as the reference
    server is. It answers as its own reference server, or passes requests to `upstream`.

        with RecordingServer(Path("lmconform/apis")) as server:
            ...  # point a client at server.base_url; server.recorder.written lists the files
    """

    def __init__(self, folder: Path, client: str | None = None, upstream: str | None = None, port: int = 0,
                 report: Callable[[str], None] | None = None, stem: str | None = None) -> None:
        super().__init__(port=port)
        reference: Starlette = self.app  # type: ignore[has-type]  # mypy loses the base's type to the reassignment below
        answerer: ASGIApp = reference if upstream is None else Upstream(upstream)
        answered_by = "the embedded reference server" if upstream is None else "a loopback upstream"
        self.recorder = Recorder(folder, answerer, client, answered_by, report, stem)
        stopping = reference.state.stopping  # set on shutdown, so that the reference app's held-open streams end
        self.app = Starlette(routes=[Route("/{path:path}", self.recorder)])
        self.app.state.stopping = stopping


def _run(args: argparse.Namespace) -> int:
    if args.to.name in APIS:
        print(f"lmconform record: --to names the cases folder that holds {', '.join(sorted(APIS))}/ "
              f"(e.g. lmconform/apis), not {args.to}", file=sys.stderr)
        return USAGE_ERROR
    try:
        server = RecordingServer(args.to, args.client, args.upstream, args.listen)
    except ValueError as error:
        print(f"lmconform record: {error}", file=sys.stderr)
        return USAGE_ERROR
    try:
        server.start()
    except OSError as error:
        print(f"lmconform record: cannot listen on 127.0.0.1:{args.listen}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    print(f"recording on {server.base_url} into {args.to}/<api>/ (answered by {server.recorder.answered_by}); "
          "Ctrl-C stops", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print(f"{len(server.recorder.written)} case files written", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """`record --listen PORT --to FOLDER` under the `lmconform` command."""
    parser = subparsers.add_parser(
        "record", help="keep what a client sends as case files",
        description="Listens on 127.0.0.1:PORT, answers as the embedded reference server (or the --upstream "
                    "server) and writes each request as FOLDER/<api>/recorded-<client>-<endpoint>-<n>.json "
                    "(FOLDER/<api>/cases/ in lmconform/apis). "
                    "Credentials are written as [Filtered]; no file is ever overwritten.")
    parser.add_argument("--listen", type=PORT, required=True, metavar="PORT", help="loopback port to listen on")
    parser.add_argument("--to", type=Path, required=True, metavar="FOLDER",
                        help="the folder that holds a folder per API, e.g. lmconform/apis (each API's cases/ there)")
    parser.add_argument("--client", metavar="NAME",
                        help="client name for file names and provenance (default: from its headers)")
    parser.add_argument("--upstream", metavar="URL",
                        help="pass requests to this server on this machine instead of the reference server")
    parser.set_defaults(handler=_run)
