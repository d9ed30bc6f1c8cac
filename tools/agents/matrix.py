"""The fault × agent matrix of docs/agents.md, for the pinned agents: `make agents-matrix` writes it (the rows are
lmconform.run.agent_matrix's, which `lmconform agents matrix NAME@VERSION` makes for any version); tests/test_agents.py
fails when the committed page no longer matches what the agents do.

The page also records a digest of what its rows follow from (INPUTS: the pins, and the code that answers the agents,
runs them and judges them). A page made from the very inputs of a run says what that run's agents would do, given
the same answers, and the test then runs only the clean rows again; when any input changed, it runs the whole
matrix (about 65 runs, three minutes).
"""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent
from lmconform.files import write_text_atomically
from lmconform.run.agent_matrix import (
    AGENT_CHECKS,
    CLEAN,
    WORKERS,
    Row,
    agent_rows,
    row_line,
    table,
)

ROOT = Path(__file__).resolve().parent.parent.parent
# What a row of the matrix follows from: the agents' pins, the reference server, the agents' configuration, sandbox and
# relay, the capture, the agent checks and their source, the agents' tasks, the matrix's own code, and this module.
INPUTS = ("lmconform/agents/*.py", "lmconform/agents/package-lock.json", "lmconform/reference/**/*.py",
          "lmconform/apis/*/reference/**/*.py",
          "lmconform/wire/*.py", "lmconform/checks/agents.py", "lmconform/fuzz/agents.py",
          "lmconform/run/agent_matrix.py", "lmconform/apis/*/cases/agent-*.json", "tools/agents/*.py")


Matrix = dict[str, list[Row]]  # by agent name: its clean row, then a row per defect


def build(base_url: str, agents: tuple[Agent, ...] = tuple(AGENTS.values()), faults: bool = True,
          page: str = "") -> Matrix:
    """Every pinned agent's rows against the reference server at `base_url` (only the clean ones without `faults`); a
    row that differs from what `page` says is run again."""
    published = published_lines(page)
    with ThreadPoolExecutor(WORKERS) as pool:
        return {agent.name: agent_rows(agent, base_url, pool, None if faults else (),
                                       _as_published(published.get(agent.title, {})))
                for agent in agents}


def _as_published(lines: dict[str | None, str]):
    return lambda row: row.key not in lines or row_line(row) == lines[row.key]


def inputs_digest() -> str:
    """What the matrix is made from, as one digest: the agents' pins, and the code that answers them and runs and
    judges them. The same digest, the same agents doing the same task against the same answers."""
    digest = hashlib.sha256()
    for path in sorted({path for pattern in INPUTS for path in ROOT.glob(pattern)}):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


# --- the page --------------------------------------------------------------------------------------------------

START, END = "<!-- fault-agent-matrix: start -->", "<!-- fault-agent-matrix: end -->"
MADE_FROM = re.compile(r"<!-- made from inputs ([0-9a-f]+) -->")


def section(matrix: Matrix, versions: dict[str, str], digest: str) -> str:
    """The generated part of docs/agents.md: a table per agent, then the defects that change nothing it gets."""
    lines = [START, f"<!-- made from inputs {digest} -->"]
    for name, rows in matrix.items():
        agent = AGENTS[name]
        lines += ["", *table(agent, f"### {agent.title} {versions.get(name, '')}".rstrip(), rows)]
    lines += ["", END]
    return "\n".join(lines)


def page_with(page: str, matrix: Matrix, versions: dict[str, str], digest: str) -> str:
    """`page` (docs/agents.md) with its generated part made from `matrix`."""
    before, found, rest = page.partition(START)
    _, ended, after = rest.partition(END)
    if not found or not ended:
        raise ValueError(f"the page has no {START} … {END} part to write the matrix into")
    return before + section(matrix, versions, digest) + after


def write_page(path: Path, matrix: Matrix, versions: dict[str, str]) -> None:
    """The page at `path` with its generated part made from `matrix` and this checkout's inputs."""
    write_text_atomically(path, page_with(path.read_text(), matrix, versions, inputs_digest()))


def made_from(page: str) -> str | None:
    found = MADE_FROM.search(page)
    return found[1] if found else None


def published_lines(page: str) -> dict[str, dict[str | None, str]]:
    """The page's line for each agent against each server (None: the clean one; CLEAN_OVERFLOW: the clean one on the
    task whose file is past the context), by the agent's title: the rows of its table, and for the defects it names
    as changing nothing, the clean row's."""
    found: dict[str, dict[str | None, str]] = {}
    title = ""
    for line in page.partition(START)[2].partition(END)[0].splitlines():
        if line.startswith("### "):
            title = next(agent.title for agent in AGENTS.values() if line[4:].startswith(agent.title + " ")
                         or line[4:] == agent.title)
            found[title] = {}
        elif line.startswith("| ") and not line.startswith(("| server", "| ---")):
            server = line[2:].partition(" |")[0]
            found[title][None if server == CLEAN else server.replace("`", "")] = line
        elif line.startswith("Defects that change none"):
            for fault in re.findall(r"`([^`]+)`", line):
                found[title][fault] = found[title][None]
    return found


def published_outcomes(page: str) -> dict[str, dict[str | None, tuple[str, ...]]]:
    """What the page says each agent does against each server, as the symbols of its cells."""
    return {title: {server: tuple(cell.strip() for cell in line.strip("|").split(" | ")[2:2 + len(AGENT_CHECKS)])
                    for server, line in lines.items()} for title, lines in published_lines(page).items()}
