"""`lmconform agents install` installs the pinned coding agents (lmconform.agents.install); `lmconform agents record`
re-records what each pinned agent sends, doing its case's task against the recording endpoint, as
`<cases>/<api>/recorded-<agent>-<version>-N.json`, the version's dots as dashes as in every case's name
(`recorded-claude-code-2-1-332-1.json`; `make record-agents`).

These cases replay against any endpoint like every recorded case: a server is checked against what Claude Code
2.1.332 sends without running Claude Code. The recorder names the client by its user agent (`claude-cli 2.1.332`)
and scrubs the recording machine from them (lmconform.record.scrub). What an agent sends runs to tens of kilobytes
(a system prompt, a dozen tools with long descriptions); every text longer than TRIM_CHARS is cut there, which keeps
every key, every tool and every schema, keeps the package small, and lets a server with a small context answer
them as it would a user's first turns. The cut is marked in the text and said in the provenance, as is the output
cap, which is RECORDED_CAP here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent
from lmconform.agents.install import InstallError, install
from lmconform.agents.outcome import Limits
from lmconform.agents.runner import run_agent
from lmconform.api_table import APIS, api_of
from lmconform.cases import CASES_DIR, cases_folder, load_cases
from lmconform.exit_status import USAGE_ERROR
from lmconform.files import write_json_atomically
from lmconform.record.kept import slug
from lmconform.record.server import RecordingServer
from lmconform.reference.wire import DEFAULT_MODEL
from lmconform.target import Target

TRIM_CHARS = 300
TRIMMED = "…[cut by lmconform]"
# The output cap a recorded request asks for. The agents ask for all a model can give (Claude Code and opencode ask
# for 32,000 tokens), and a real model asked so talks until its context is full: minutes a request on a laptop.
RECORDED_CAP = 64
RECORDING_LIMITS = Limits(seconds=120, requests=20)


def trimmed(value: Any) -> Any:
    """`value` with every string longer than TRIM_CHARS cut there and marked."""
    if isinstance(value, str):
        return value if len(value) <= TRIM_CHARS else value[:TRIM_CHARS] + TRIMMED
    if isinstance(value, dict):
        return {key: trimmed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [trimmed(item) for item in value]
    return value


def agent_case(agent: Agent):
    """The agent's case of the `agents` source: the task it is recorded doing."""
    return next(case for case in load_cases(agent.api) if case.agent is not None and case.agent.name == agent.name)


def record(agent: Agent, folder: Path, node_modules: Path, say=print) -> list[Path]:
    """The agent's requests, doing its case's task against the reference server, as new case files (those of an
    earlier recording of the agent removed first)."""
    version = agent.version(node_modules) or "unknown"
    api_folder = cases_folder(folder, agent.api)
    for old in api_folder.glob(f"recorded-{agent.name}-*.json"):
        old.unlink()
    case = agent_case(agent)
    with RecordingServer(folder, stem=f"recorded-{agent.name}-{slug(version)}", report=say) as server:
        run = run_agent(agent, Target(base_url=server.base_url, model=DEFAULT_MODEL), case.agent.task,
                        case.agent.secret, RECORDING_LIMITS, node_modules)
        written = list(server.recorder.written)
    if run.unavailable:
        raise InstallError(run.unavailable)
    cap = api_of(agent.api).output_cap
    for path in written:
        document = json.loads(path.read_text())
        document["request"] = trimmed(document["request"])
        document["provenance"]["note"] += (f"; recorded doing the task of {case.id}; every text of the request longer "
                                           f"than {TRIM_CHARS} characters is cut there (marked {TRIMMED!r})")
        body = document["request"].get("body")
        if isinstance(body, dict) and cap in body:
            document["provenance"]["note"] += f"; `{cap}` {body[cap]} as sent, {RECORDED_CAP} here"
            body[cap] = RECORDED_CAP
        # What an agent sends, it sends to every server, and a refusal stops it: its request is to be answered 2xx.
        # Where the reference server's dialect refuses it (Codex's tool types on LM Studio's Responses API), the
        # finding's known cause says so, and expects it of that dialect (lmconform/verdicts/causes.toml).
        document["expect"]["status"] = "success"
        write_json_atomically(path, document)
    say(f"{run.label}: {run.ended} ({run.exit_text}), {len(written)} requests kept")
    return written


def _install(args: argparse.Namespace) -> int:
    try:
        node_modules = install(tuple(AGENTS.values()))
    except InstallError as error:
        print(f"lmconform agents: {error}", file=sys.stderr)
        return 1
    names = ", ".join(f"{agent.title} {agent.version(node_modules)}" for agent in AGENTS.values())
    print(f"lmconform agents: {names} in {node_modules}", file=sys.stderr)
    return 0


def _record(args: argparse.Namespace) -> int:
    if args.to.name in APIS:
        print(f"lmconform agents record: --to names the cases folder that holds {', '.join(sorted(APIS))}/, not "
              f"{args.to}", file=sys.stderr)
        return USAGE_ERROR
    unknown = sorted(set(args.agent) - set(AGENTS))
    if unknown:
        print(f"lmconform agents record: no agent {', '.join(unknown)}; known: {', '.join(AGENTS)}", file=sys.stderr)
        return USAGE_ERROR
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        node_modules = install(tuple(AGENTS.values()))
        for name in args.agent or list(AGENTS):
            record(AGENTS[name], args.to, node_modules, say)
    except InstallError as error:
        print(f"lmconform agents: {error}", file=sys.stderr)
        return 1
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """`agents install` and `agents record` under the `lmconform` command."""
    parser = subparsers.add_parser("agents", help="install the pinned coding agents, or re-record what they send")
    commands = parser.add_subparsers(dest="agents_command", required=True, metavar="ACTION")
    commands.add_parser("install", help="install Claude Code, Codex CLI and opencode at their pinned versions with "
                                        "npm, once per machine (about 1.2 GB)").set_defaults(handler=_install)
    recording = commands.add_parser(
        "record", help="run each pinned agent on its case's task against the recording endpoint and keep what it "
                       "sends as recorded-<agent>-<version>-N.json cases")
    recording.add_argument("--to", type=Path, default=CASES_DIR, metavar="FOLDER",
                           help="the cases folder that holds chat/, messages/ and responses/ (default: lmconform's)")
    recording.add_argument("--agent", action="append", default=[], metavar="NAME",
                           help=f"only this agent (repeatable): {', '.join(AGENTS)}")
    recording.set_defaults(handler=_record)
