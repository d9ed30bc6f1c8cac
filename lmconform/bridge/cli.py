"""`lmconform bridge`: the reference VS Code language-model bridge on stdin and stdout.

    lmconform bridge                                   # answers through the embedded reference server
    lmconform bridge --endpoint http://localhost:1234  # through LM Studio (or any OpenAI-compatible server)
    lmconform bridge --agent echo                      # deterministic: says what its session gave it
    lmconform bridge --agent echo --fault cancel-ignored --profile symposium
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator

from lmconform.bridge.agents import AGENTS, Agent, EchoAgent, OpenAIAgent
from lmconform.bridge.dispatcher import PROFILES, Bridge
from lmconform.bridge.faults import FAULTS, parse_faults
from lmconform.bridge.jsonrpc import Output
from lmconform.command_line import OneLineErrorParser, bounded
from lmconform.exit_status import USAGE_ERROR
from lmconform.target import normalize_base_url

PROG = "lmconform bridge"
_READ_SIZE = 1 << 16


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bridge", help="run the reference VS Code language-model bridge on stdin/stdout",
        description="Speaks the vscodelm protocol (newline-delimited JSON-RPC 2.0) on stdin and stdout and answers "
                    "through an OpenAI-compatible endpoint, or with the deterministic echo agent. Logs go to stderr.")
    # An editor or a test harness starts the bridge and shows its stderr to a person as it is: its usage error is one
    # line however its parser was built (`python -m lmconform.bridge` builds a plain one).
    parser.__class__ = OneLineErrorParser
    parser.add_argument("--endpoint", metavar="URL",
                        help="OpenAI-compatible server, with or without /v1 (default: the embedded reference server "
                             "on a free loopback port)")
    parser.add_argument("--api-key", metavar="K", default=os.environ.get("LMCONFORM_API_KEY"),
                        help="sent as the bearer token; also read from LMCONFORM_API_KEY")
    parser.add_argument("--model", metavar="M", help="model to request (default: the first listed by /v1/models)")
    parser.add_argument("--max-tokens", type=bounded(int, 1), metavar="N",
                        help="output cap of each chat completion the openai agent requests (default: none)")
    parser.add_argument("--temperature", type=bounded(float, 0, 2), metavar="T",
                        help="temperature of each chat completion the openai agent requests (0: repeatable)")
    parser.add_argument("--agent", choices=AGENTS, default="openai",
                        help="openai: the endpoint answers; echo: an answer that says what the session gave the "
                             "agent (committed messages, commit or discard, new input), no endpoint (default openai)")
    parser.add_argument("--profile", choices=PROFILES, default="strict",
                        help="strict: a cancelled request gets one lm/responseComplete and its result; symposium: "
                             "neither, as Symposium's bridge does (default strict)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME",
                        help=f"reproduce this defect (repeatable): {', '.join(FAULTS)}")
    parser.add_argument("--list-faults", action="store_true", help="print the fault catalogue, one line each, and exit")
    parser.add_argument("--part-delay", type=bounded(float, 0, 60), default=0.0, metavar="S",
                        help="pause S seconds before each part after the first, so a turn can be cancelled "
                             "mid-stream (default 0)")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if args.list_faults:
        width = max(map(len, FAULTS))
        for fault in FAULTS.values():
            print(f"{fault.name:<{width}}  {fault.summary}")
        return 0
    try:
        faults = parse_faults(args.fault)
        endpoint = normalize_base_url(args.endpoint) if args.endpoint else None
    except ValueError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return USAGE_ERROR
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format=f"{PROG}: %(message)s")
    protocol_out = sys.stdout.buffer
    # stdout carries the protocol and nothing else: whatever prints by accident goes to stderr.
    sys.stdout = sys.stderr
    embedded = None
    try:
        agent: Agent
        if args.agent == "echo":
            agent = EchoAgent()
        else:
            if endpoint is None:
                from lmconform.reference import ReferenceServer

                embedded = ReferenceServer().start()
                endpoint = embedded.base_url
            agent = OpenAIAgent(endpoint, args.api_key, args.model, args.max_tokens, args.temperature)
        bridge = Bridge(agent, Output(protocol_out, faults), profile=args.profile, faults=faults,
                        part_delay=args.part_delay)
        return asyncio.run(_serve(bridge, sys.stdin.fileno()))
    except KeyboardInterrupt:
        return 130
    finally:
        if embedded is not None:
            embedded.stop()


async def _serve(bridge: Bridge, stdin: int) -> int:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    threading.Thread(target=_read_lines, args=(stdin, loop, lines), name="lmconform-bridge-stdin",
                     daemon=True).start()
    try:
        return await bridge.run(lines)
    finally:
        await bridge.agent.aclose()


def _lines(stdin: int) -> Iterator[bytes]:
    """Lines read with os.read, not through sys.stdin: a thread blocked in a buffered reader holds its lock, and
    the interpreter aborts at exit when it cannot take it (which the bridge does when it stops before stdin ends)."""
    pending = b""
    while chunk := os.read(stdin, _READ_SIZE):
        *complete, pending = (pending + chunk).split(b"\n")
        yield from complete
    if pending:
        yield pending  # a last line without its newline is still a line


def _read_lines(stdin: int, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | None]) -> None:
    """Blocking reads, in their own thread: the loop stays free to stream turns and to act on a cancel."""
    try:
        for line in _lines(stdin):
            loop.call_soon_threadsafe(lines.put_nowait, line)
    except RuntimeError:
        return  # the loop has closed: the bridge is exiting already
    except OSError as error:
        logging.getLogger("lmconform.bridge").warning("stdin cannot be read: %s", error)
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(lines.put_nowait, None)  # the end of input, as the loop understands it
