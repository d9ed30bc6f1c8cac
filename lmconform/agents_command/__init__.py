"""`lmconform agents …`: the coding agents at any version.

- `install [NAME@VERSION …]`: the pinned agents (once per machine), or the versions named, into the cache;
- `record [--agent NAME[@VERSION]]`: what each agent sends, doing its case's task with each shape of model id, kept
  as recorded cases (lmconform.record.agents) — a new version's added to lmconform's cases in one command;
- `diff NAME@A NAME@B`: what the newer version sends that the older did not (lmconform.run.agent_diff);
- `matrix NAME@VERSION`: the fault × agent matrix of that version, against the pinned version's (or `--against`'s),
  each cell that changed listed, green → red first; exit status 1 on any green → red (lmconform.run.agent_matrix);
- `compare BEFORE.json AFTER.json`: the same for the agents' cells of two runs against one server.

A version that cannot be found or installed is one line and exit status 2, as is a bad argument.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lmconform.agents import AGENTS
from lmconform.agents.install import NPM, InstallError, Packages
from lmconform.agents.versions import FORMS, AgentAt, parse_agent, prepare, resolve
from lmconform.api_table import APIS
from lmconform.cases import CASES_DIR, Case
from lmconform.exit_status import USAGE_ERROR
from lmconform.files import write_text_atomically


def _say(line: str) -> None:
    print(f"lmconform agents: {line}", file=sys.stderr, flush=True)


class Refused(Exception):
    """A bad argument, or a version that cannot be found or installed: one line, exit status 2."""


def _agent_at(text: str) -> AgentAt:
    try:
        return parse_agent(text)
    except ValueError as error:
        raise Refused(f"{error}: name an agent among {', '.join(AGENTS)}, as {FORMS}") from None


def _installed(at: AgentAt, packages: Packages = NPM) -> tuple[str, Path]:
    """The exact version `at` names and its node_modules, installed first if it is not."""
    try:
        version = resolve(at, packages)
        return version, prepare(at.agent, version, packages, _say)
    except InstallError as error:
        raise Refused(f"{at}: {error}") from None


def _handled(handler):
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except Refused as refusal:
            print(f"lmconform agents {args.agents_command}: {refusal}", file=sys.stderr)
            return USAGE_ERROR
    return run


def _install(args: argparse.Namespace) -> int:
    wanted = [_agent_at(text) for text in args.agent] or [AgentAt(agent) for agent in AGENTS.values()]
    for at in wanted:
        version, node_modules = _installed(at)
        _say(f"{at.agent.title} {version} in {node_modules}")
    return 0


def _record(args: argparse.Namespace) -> int:
    from lmconform.record.agents import record

    if args.to.name in APIS:
        raise Refused(f"--to names the cases folder that holds {', '.join(sorted(APIS))}/, not {args.to}")
    wanted = [_agent_at(text) for text in args.agent] or [AgentAt(agent) for agent in AGENTS.values()]
    for at in wanted:
        _, node_modules = _installed(at)
        try:
            record(at.agent, args.to, node_modules, _say)
        except InstallError as error:
            raise Refused(str(error)) from None
    return 0


def _write(markdown: str, path: Path | None) -> None:
    """The Markdown printed, written to `path` if given, and appended to the CI job's summary where there is one."""
    from lmconform.report.step_summary import append_markdown

    print(markdown)
    if path is not None:
        try:
            write_text_atomically(path, markdown)
        except OSError as error:
            raise Refused(f"cannot write {path}: {error.strerror or error}") from None
    append_markdown(markdown)


def _diff(args: argparse.Namespace) -> int:
    older, newer = _agent_at(args.older), _agent_at(args.newer)
    if older.agent is not newer.agent:
        raise Refused(f"{args.older} and {args.newer} are two agents: name two versions of one")
    return diff(older, newer, args.markdown)


def diff(older: AgentAt, newer: AgentAt, markdown: Path | None, packages: Packages = NPM,
         case: Case | None = None) -> int:
    """`agents diff`: each version installed if it is not, both recorded, what changed printed."""
    from lmconform.run.agent_diff import diff_versions

    found = diff_versions(older.agent, _installed(older, packages), _installed(newer, packages), case, _say)
    _write(found.markdown(), markdown)
    return 0


def _matrix(args: argparse.Namespace) -> int:
    at = _agent_at(args.agent)
    baseline = _agent_at(f"{at.agent.name}@{args.against}") if args.against else AgentAt(at.agent)
    return matrix(at, baseline, args.fault, args.markdown)


def matrix(at: AgentAt, baseline: AgentAt, faults: list[str], markdown: Path | None, packages: Packages = NPM,
           case: Case | None = None) -> int:
    """`agents matrix`: the matrix of `at` against `baseline`'s, the changed cells printed; 1 on a green → red."""
    from lmconform.reference import ReferenceServer
    from lmconform.run.agent_matrix import compare_versions, faults_of

    unknown = sorted(set(faults) - set(faults_of(at.agent)))
    if unknown:
        raise Refused(f"--fault {', '.join(unknown)}: not a defect of {at.agent.title}'s API; `lmconform faults` "
                      "lists them")
    installed = _installed(baseline, packages), _installed(at, packages)
    with ReferenceServer() as server:
        compared = compare_versions(at.agent, *installed, server.base_url, faults or None, case)
    _write(compared.markdown(), markdown)
    return 1 if compared.green_to_red else 0


def _compare(args: argparse.Namespace) -> int:
    from lmconform.agents_command.compare import compare_records
    from lmconform.verdicts.records import RecordError

    try:
        compared = compare_records(args.before, args.after)
    except RecordError as error:
        raise Refused(str(error)) from None
    if not compared.versions:
        raise Refused(f"{args.after} and {args.before} have no agent in common: run the same agents (--agents)")
    if compared.missing:
        raise Refused(f"{args.after} did not run {', '.join(compared.missing)}, which {args.before} ran")
    _write(compared.markdown(), args.markdown)
    return 1 if compared.green_to_red else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """`agents install`, `record`, `diff`, `matrix` and `compare` under the `lmconform` command."""
    parser = subparsers.add_parser("agents", help="the coding agents at any version: install them, record what "
                                                  "they send, and what changed from one version to another")
    commands = parser.add_subparsers(dest="agents_command", required=True, metavar="ACTION")
    installing = commands.add_parser("install", help="install the pinned agents with npm, once per machine (about "
                                                     "1.2 GB), or the versions named")
    installing.add_argument("agent", nargs="*", metavar="NAME@VERSION", help=f"only these: {FORMS}")
    installing.set_defaults(handler=_handled(_install))
    recording = commands.add_parser(
        "record", help="run each agent on its case's task against the recording endpoint, with each shape of model "
                       "id, and keep what it sends as recorded-<agent>-<version>-N.json cases")
    recording.add_argument("--to", type=Path, default=CASES_DIR, metavar="FOLDER",
                           help="the cases folder that holds chat/, messages/ and responses/ (default: lmconform's)")
    recording.add_argument("--agent", action="append", default=[], metavar="NAME[@VERSION]",
                           help=f"only this agent (repeatable), at its pinned version or another: {FORMS}")
    recording.set_defaults(handler=_handled(_record))
    diffing = commands.add_parser("diff", help="what a newer version of an agent sends that an older one did not, "
                                               "and which checks and known causes see something new in it")
    diffing.add_argument("older", metavar="NAME@A")
    diffing.add_argument("newer", metavar="NAME@B")
    diffing.add_argument("--markdown", type=Path, metavar="FILE", help="also write what it found to FILE")
    diffing.set_defaults(handler=_handled(_diff))
    matrix = commands.add_parser(
        "matrix", help="the fault × agent matrix of a version, and each cell that changed against the pinned "
                       "version's, green → red first; exit status 1 on any green → red")
    matrix.add_argument("agent", metavar="NAME@VERSION")
    matrix.add_argument("--against", metavar="VERSION", help="compare with this version instead of the pinned one")
    matrix.add_argument("--fault", action="append", default=[], metavar="NAME",
                        help="only this defect (repeatable; default: every defect of the agent's API)")
    matrix.add_argument("--markdown", type=Path, metavar="FILE", help="also write the matrix and its changes to FILE")
    matrix.set_defaults(handler=_handled(_matrix))
    comparing = commands.add_parser(
        "compare", help="the agents' cells of two runs against one server (two results records): each that "
                        "changed, green → red first; exit status 1 on any green → red")
    comparing.add_argument("before", type=Path, metavar="BEFORE.json")
    comparing.add_argument("after", type=Path, metavar="AFTER.json")
    comparing.add_argument("--markdown", type=Path, metavar="FILE", help="also write the changes to FILE")
    comparing.set_defaults(handler=_handled(_compare))
