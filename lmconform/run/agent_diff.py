"""`lmconform agents diff claude-code@A claude-code@B`: what changed in what an agent sends between two versions.

Both versions do the agent's task against the reference server, once with each shape of model id its profile names
(a local model's id; for Claude Code a `claude-*` id as well), and their requests are recorded and scrubbed as
`lmconform agents record` keeps them (lmconform.record.agents), into a folder of their own. Then, shape by shape:

- what the newer version sends that the older did not, and what it no longer sends, part by part (the endpoint, query
  strings, headers and beta flags, fields, roles, item and tool types, tools, schema keywords: lmconform.record.changes);
- how the reference server (LM Studio's dialect) answered each version's requests;
- which of lmconform's checks judge something in the newer version's requests that they judged in none of the older's;
- which known causes now reach it: the defects of the reference server's catalogue (each a real server's) that change
  the answers to the newer version's requests and left the older's alone, found by sending both versions' requests
  to the server with the defect and to the clean server (as the fault × agent matrix finds the defects that change
  nothing an agent gets), and the reverse.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from lmconform.agents.agent import Agent, ModelShape
from lmconform.cases import Case, load_case
from lmconform.record.agents import Recording, record
from lmconform.record.changes import Change, checks_judging, compare
from lmconform.reference import ReferenceServer
from lmconform.run.agent_matrix import WORKERS, faults_of, reference_target, unchanged


@dataclass(frozen=True)
class ShapeDiff:
    """The two versions given one shape of model id."""

    shape: ModelShape
    answered: tuple[str, str]  # what each version sent, and how the reference server answered it
    statuses: tuple[tuple[int | None, ...], tuple[int | None, ...]]  # the status of each answer, for each version
    changes: list[Change]
    checks: tuple[tuple[str, ...], tuple[str, ...]]  # checks that judge something new in the newer, and the reverse
    causes: tuple[tuple[str, ...], tuple[str, ...]]  # defects that now change its answers, and those that no longer

    @property
    def same(self) -> bool:
        return not self.changes and self.statuses[0] == self.statuses[1] and not any(self.checks + self.causes)


@dataclass(frozen=True)
class VersionDiff:
    agent: Agent
    versions: tuple[str, str]  # older, newer
    shapes: list[ShapeDiff]

    def markdown(self) -> str:
        older, newer = self.versions
        title = self.agent.title
        lines: list[str | None] = [f"### {title} {older} → {newer}", ""]  # None: a list of nothing, left out
        for diff in self.shapes:
            lines += [f"Given {diff.shape.meaning} (`{diff.shape.model}`): {older} {diff.answered[0]}; {newer} "
                      f"{diff.answered[1]}."]
            if diff.same:
                lines += ["", f"Nothing changed in what {title} sends.", ""]
                continue
            lines.append("")
            for change in diff.changes:
                lines += [f"- {change.title}: " + "; ".join(
                    part for part in (_listed("new", change.added), _listed("no longer", change.removed)) if part)]
            lines += [_said(f"checks that judge something new in {newer}'s requests", diff.checks[0]),
                      _said(f"checks that judged something of {older}'s only", diff.checks[1]),
                      _said("known causes (defects of the catalogue) that now change its answers", diff.causes[0]),
                      _said("known causes that no longer do", diff.causes[1]), ""]
        lines.append(f"`lmconform agents record --agent {self.agent.name}@{newer}` adds {newer}'s recorded cases to "
                     "lmconform's.")
        return "\n".join(line for line in lines if line is not None) + "\n"


def _listed(how: str, parts: tuple[str, ...]) -> str:
    return f"{how} " + ", ".join(f"`{part}`" for part in parts) if parts else ""


def _said(what: str, names: tuple[str, ...]) -> str | None:
    return f"- {what}: " + ", ".join(f"`{name}`" for name in names) if names else None


def _answered(recording: Recording) -> str:
    """What the recording sent and how the reference server answered: `sent 2 requests (49.5 and 50.6 kB), each
    answered 2xx`."""
    statuses = [exchange.status for exchange in recording.run.http_exchanges]
    if not statuses:
        return f"sent no request ({recording.run.exit_text or recording.run.ended})"
    refused = [f"HTTP {status}" for status in statuses if not (status and 200 <= status < 300)]
    sizes = [f"{len(json.dumps(body, ensure_ascii=False).encode()) / 1000:.1f}" for _, _, body, _ in recording.requests]
    shown = ", ".join(sizes[:-1]) + " and " + sizes[-1] if len(sizes) > 1 else "".join(sizes)
    return (f"sent {len(statuses)} request{'s' if len(statuses) != 1 else ''} ({shown} kB), "
            + (f"answered {', '.join(refused)}" if refused else "each answered 2xx"))


def _reaching(agent: Agent, recording: Recording, base_url: str) -> list[str]:
    """The defects that change the answer to one of the recording's requests, in catalogue order."""
    clean = reference_target(base_url)
    with ThreadPoolExecutor(WORKERS) as pool:  # a defect that stalls is waited out for the read timeout
        changed = pool.map(lambda fault: not unchanged(recording.requests, clean,
                                                       replace(clean, base_url=f"{base_url}/faults/{fault}")),
                           faults_of(agent))
        return [fault for fault, differs in zip(faults_of(agent), changed, strict=True) if differs]


def _missing(names: list[str], other: list[str]) -> tuple[str, ...]:
    return tuple(name for name in names if name not in other)


def diff_versions(agent: Agent, older: tuple[str, Path], newer: tuple[str, Path], case: Case | None = None,
                  say: Callable[[str], None] = print) -> VersionDiff:
    """`agent`'s requests at two versions (each its version and node_modules folder) compared, shape by shape."""
    with tempfile.TemporaryDirectory(prefix="lmconform-agents-diff-") as folder, ReferenceServer() as server:
        recorded = [record(agent, Path(folder) / which, modules, say, case)
                    for which, (_, modules) in (("older", older), ("newer", newer))]
        shapes = []
        for before, after in zip(*recorded, strict=True):
            documents = [[json.loads(path.read_text()) for path in each.written] for each in (before, after)]
            cases = [[load_case(path) for path in each.written] for each in (before, after)]
            judging = [checks_judging(found) for found in cases]
            reaching = [_reaching(agent, each, server.base_url) for each in (before, after)]
            statuses = [tuple(exchange.status for exchange in each.run.exchanges) for each in (before, after)]
            shapes.append(ShapeDiff(before.shape, (_answered(before), _answered(after)), (statuses[0], statuses[1]),
                                    compare(*documents),
                                    (tuple(sorted(judging[1] - judging[0])), tuple(sorted(judging[0] - judging[1]))),
                                    (_missing(reaching[1], reaching[0]), _missing(reaching[0], reaching[1]))))
    return VersionDiff(agent, (older[0], newer[0]), shapes)
