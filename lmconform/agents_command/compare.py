"""`lmconform agents compare BEFORE.json AFTER.json`: the agents' cells of two runs against the same server (two
results records: the pinned versions', then `--agents NAME@latest`'s, as the weekly workflow of examples/ci/ makes
them), compared as the fault × agent matrix compares two versions: each agent check's cell that changed, green → red
first. A cell is the agent check's verdict on the agent's case (✓ ✗ ⚠, · not judged)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from lmconform.run.agent_matrix import AGENT_CHECKS, CellChange, Row, changed_cells
from lmconform.verdicts.records import RunResults, load_run
from lmconform.vocabulary import Outcome


@dataclass(frozen=True)
class AgentCells:
    """One agent's run in a results record: its label (with its version) and its row of cells."""

    label: str  # `Claude Code 2.1.332`
    row: Row


def agents_of(run: RunResults) -> dict[str, AgentCells]:
    """The agents a record ran, by their users' name for them (`Claude Code`), each with its row of cells."""
    verdicts: dict[str, dict[str, Outcome]] = {}
    labels: dict[str, str] = {}
    for result in run.results:
        if result.kind == "agent" and result.agent:
            title = result.agent.rsplit(" ", 1)[0]
            labels[title] = result.agent
            verdicts.setdefault(title, {})[result.check] = Outcome(result.outcome)
    return {title: AgentCells(labels[title], Row(None, tuple((check.id, found.get(check.id)) for check in AGENT_CHECKS),
                                                 ""))
            for title, found in verdicts.items()}


@dataclass(frozen=True)
class RecordsCompared:
    server: str  # the target's label in the later record
    versions: dict[str, tuple[str, str]]  # agent -> its label in each record (`Claude Code 2.1.332`)
    changes: list[CellChange]
    missing: list[str]  # agents of the earlier record the later one did not run

    @property
    def green_to_red(self) -> list[CellChange]:
        return [change for change in self.changes if change.green_to_red]

    def markdown(self) -> str:
        lines = [f"### The agents against {self.server}: what changed", ""]
        for title, (before, after) in self.versions.items():
            changed = [change for change in self.changes if change.agent == title]
            broke = [change for change in changed if change.green_to_red]
            lines.append(f"- {before} → {after}: " + (
                f"{len(changed)} cell{'s' if len(changed) != 1 else ''} changed, {len(broke)} green → red"
                if changed else "no cell changed"))
        lines += [f"- {title}: not run in the later record" for title in self.missing]
        if self.changes:
            lines += ["", "| agent | check | before | after |", "| --- | --- | :-: | :-: |"]
            lines += [f"| {change.agent} | {change.column}{' (green → red)' if change.green_to_red else ''} | "
                      f"{change.before} | {change.after} |" for change in self.changes]
        return "\n".join(lines) + "\n"


def compare_records(before: Path, after: Path) -> RecordsCompared:
    """The agents' cells of `after` against those of `before` (RecordError for a file that is no results record)."""
    earlier, later = load_run(before), load_run(after)
    old, new = agents_of(earlier), agents_of(later)
    server = later.target.label or later.target.url
    changes = [replace(change, server=server) for title in new if title in old
               for change in changed_cells(title, [old[title].row], [new[title].row])]
    return RecordsCompared(server, {title: (old[title].label, new[title].label) for title in new if title in old},
                           sorted(changes, key=lambda change: not change.green_to_red),
                           [title for title in old if title not in new])
