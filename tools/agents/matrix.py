"""The fault × agent matrix of docs/agents.md: each defect of the reference server's catalogue of an agent's API (and
every HTTP defect) against each agent that speaks that API, on the task of the agent's case: which server defects
break which agent, and how, in the agent's own words. `make agents-matrix` writes it; tests/test_agents.py fails
when the committed page no longer matches what the agents do.

A defect that changes none of the answers the agent gets changes nothing the agent does, and its row is the clean
row; it is found without running the agent. The agent's clean run is replayed, request by request, to the server
with the defect and to the clean server: when every answer is the same (timestamps and random request ids aside,
which no defect sets to another integer or id), the agent in a run with the defect would be sent the very answers
of its clean run at every step. That holds because the reference server's defects act on the form of an answer
(its events, its fields, its status), never on the values a run varies (session ids, the sandbox's folder), so a
defect that leaves the clean run's answers alone leaves those of any run of the same task alone. Every other defect
is run, a few agents at a time.

The page also records a digest of what its rows follow from (INPUTS: the pins, and the code that answers the agents,
runs them and judges them). A page made from the very inputs of a run says what that run's agents would do, given
the same answers, and the test then runs only the clean rows again; when any input changed, it runs the whole
matrix (about 65 runs, three minutes).
"""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent
from lmconform.agents.outcome import REQUEST_LIMIT, TIME_LIMIT, AgentRun, Limits
from lmconform.agents.runner import run_agent
from lmconform.cases import Case, load_cases
from lmconform.checks.evaluate import evaluate
from lmconform.checks.registry import REGISTRY
from lmconform.files import write_text_atomically
from lmconform.fuzz.agents import observations
from lmconform.reference import FAULTS
from lmconform.target import Target
from lmconform.verdicts.grades import BREAKS, LIMITED, STATUS_STYLE, WORKS
from lmconform.vocabulary import OUTCOME_STYLES, Outcome
from lmconform.wire.http import HttpExchange, send

ROOT = Path(__file__).resolve().parent.parent.parent
AGENT_CHECKS = tuple(check for check in REGISTRY.values() if check.kind == "agent")
# What a row of the matrix follows from: the agents' pins, the reference server, the agents' configuration, sandbox and
# relay, the capture, the agent checks and their source, the agents' tasks, and this module.
INPUTS = ("lmconform/agents/*.py", "lmconform/agents/package-lock.json", "lmconform/reference/**/*.py",
          "lmconform/apis/*/reference/**/*.py",
          "lmconform/wire/*.py", "lmconform/checks/agents.py", "lmconform/fuzz/agents.py",
          "lmconform/apis/*/cases/agent-*.json", "tools/agents/*.py")
# Limits of a scripted run: two generations take a second or two; a defect that makes an agent wait or retry is
# shown by the time limit, and a loop by the request limit.
LIMITS = Limits(seconds=30, requests=12)
WORKERS = 4  # agents at once: most of a run is waiting on the other side
RERUNS = 2  # more runs of a row that does not come out as the page says
READ_TIMEOUT_S = 5.0
WORDS_CHARS = 160
# What differs between two answers to the same request on the clean server: the time, and an error's random id.
_VOLATILE = (re.compile(rb'"(created|created_at)":\s*\d+'), re.compile(rb'"request_id":\s*"req_[0-9a-f]+"'))
# Rows that are a race inside the agent, seen both ways on the same inputs: what the agent does depends on which of
# two of its own threads comes first, so on the machine's load, not on the server. The cells the race decides show
# RACED and the words say both ways; the cell it leaves alone, whether lmconform's checks accept the answers the agent
# got, is shown and compared as in any row.
RACES = {
    ("claude-code", "content-length-long"):
        'answered, or showed "API Error: Connection to the API was lost (ECONNRESET)", as its stream parser reads the '
        "last event before its HTTP client reports the early close or after",
    ("opencode", "content-length-long"): "ran its tool before its 30 s were up, or did not",
}
RACED = "~"
DECIDED_BY_THE_SERVER = ("agent.request.accepted",)
# Ids a run varies, in what an agent says: the reference server derives them from the request, which carries the
# agent's session.
_RUN_IDS = re.compile(r"\b(toolu_|call_|msg_|req_|resp_|fc_|chatcmpl-|ses_|prt_)[A-Za-z0-9]+|\b\d{6,}\b")


Matrix = dict[str, list["Row"]]  # by agent name: its clean row, then a row per defect


@dataclass(frozen=True)
class Row:
    fault: str | None  # None: the clean server
    outcomes: tuple[tuple[str, Outcome | None], ...]  # per agent check, its verdict (None: nothing to judge)
    words: str  # what the agent did, in its own words
    unchanged: bool = False  # the defect changes none of the answers the agent gets: the clean row, not run
    raced: bool = False  # a race inside the agent (RACES): its cells other than DECIDED_BY_THE_SERVER are RACED

    @property
    def grade(self) -> str | None:
        """What the agent did, as the headline grades it (lmconform.verdicts.agents): it breaks when an agent check
        of its own doing failed or had no verdict, works with limits when only a refusal it worked round did, and
        works otherwise; None for a race, which the agent decides one way or the other."""
        if self.raced:
            return None
        own = [outcome for check, outcome in self.outcomes if check not in DECIDED_BY_THE_SERVER]
        if Outcome.FAILED in own or Outcome.ERROR in own:
            return BREAKS
        return LIMITED if any(outcome not in (None, Outcome.OK) for _, outcome in self.outcomes) else WORKS


def agent_case(agent: Agent) -> Case:
    return next(case for case in load_cases(agent.api) if case.agent is not None and case.agent.name == agent.name)


def faults_of(agent: Agent) -> list[str]:
    return [name for name, fault in FAULTS.items() if fault.api in (agent.api, "http") and not fault.variant]


def row_of(agent: Agent, run: AgentRun, target: Target, fault: str | None) -> Row:
    examples = observations(agent_case(agent), run, target)
    outcomes = []
    for check in AGENT_CHECKS:
        verdicts = [verdict for observed in examples if (verdict := evaluate(check, observed)) is not None]
        outcomes.append((check.id, max((verdict.outcome for verdict in verdicts), key=lambda o: o.severity)
                         if verdicts else None))
    race = RACES.get((agent.name, fault or ""))
    return Row(fault, tuple(outcomes), f"a race: {race}" if race else words(run), raced=bool(race))


def words(run: AgentRun) -> str:
    """How the run went, in the agent's own words, the same on every run of it."""
    if run.unavailable:
        said = run.unavailable
    elif run.ended == REQUEST_LIMIT:
        ran = ", ".join(tool.shown() for tool in run.outcome.tool_runs[-2:])
        said = f"still going after {run.limits.requests} requests" + (f"; last ran {ran}" if ran else "")
    elif run.ended == TIME_LIMIT:
        said = f"still going after {run.limits.seconds:g} s" + (
            f"; retried: {run.outcome.retries[-1]}" if run.outcome.retries else "")
    elif run.outcome.errors:
        said = "showed: " + run.outcome.errors[0]
    elif run.outcome.final_text is not None:
        said = "answered: " + run.outcome.final_text
    else:
        said = f"showed nothing and ended ({run.exit_text})"
    said = _RUN_IDS.sub(lambda found: (found[1] or "") + "…", run.shown(" ".join(said.split())))
    return said if len(said) <= WORDS_CHARS else said[:WORDS_CHARS - 1] + "…"


def _answer(exchange: HttpExchange) -> tuple[Any, ...]:
    body = exchange.body
    for volatile in _VOLATILE:
        body = volatile.sub(lambda found: found[0].split(b":")[0] + b":0", body)
    return exchange.status, exchange.content_type, body, exchange.error_kind


def unchanged(run: AgentRun, clean: Target, faulty: Target) -> bool:
    """Whether every request of the clean run gets the same answer from the server with the defect."""
    for exchange in run.exchanges:
        path = exchange.request.url.removeprefix(clean.base_url)
        body = exchange.request.body
        if _answer(send(faulty, exchange.request.method, path, body)) != _answer(
                send(clean, exchange.request.method, path, body)):
            return False
    return bool(run.exchanges)


def agent_rows(agent: Agent, base_url: str, pool: ThreadPoolExecutor, faults: bool = True,
               published: dict[str | None, str] | None = None) -> list[Row]:
    """The clean row, then (with `faults`) a row per defect of the agent's API, in catalogue order. A row that does
    not come out as `published` says (its line of the page) is run again, RERUNS times at most: an agent's run is
    a race between its threads (a tool started or not before a stream's error is read), and a row is what the agent
    does, not what it did once."""
    target = Target(base_url=base_url, model="lmconform-reference", read_timeout=READ_TIMEOUT_S,
                    fingerprint={"kind": "reference"})
    case = agent_case(agent)
    measured = agent.as_measured()  # Codex with the tools LM Studio's dialect refuses turned off

    def run_against(fault: str | None) -> tuple[AgentRun, Target]:
        faulty = target if fault is None else replace(target, base_url=f"{base_url}/faults/{fault}")
        return run_agent(measured, faulty, case.agent.task, case.agent.secret, LIMITS), faulty

    clean_run, _ = run_against(None)
    clean = row_of(agent, clean_run, target, None)
    rows: dict[str, Row] = {}
    pending = {}
    for fault in faults_of(agent) if faults else ():
        if unchanged(clean_run, target, replace(target, base_url=f"{base_url}/faults/{fault}")):
            rows[fault] = replace(clean, fault=fault, unchanged=True)
        else:
            pending[fault] = pool.submit(run_against, fault)
    for fault, future in pending.items():
        run, faulty = future.result()
        rows[fault] = row_of(agent, run, faulty, fault)
    for fault in pending:
        for _ in range(RERUNS):
            if published is None or fault not in published or row_line(rows[fault]) == published[fault]:
                break
            run, faulty = run_against(fault)
            rows[fault] = row_of(agent, run, faulty, fault)
    return [clean, *(rows[fault] for fault in faults_of(agent) if fault in rows)]


def build(base_url: str, agents: tuple[Agent, ...] = tuple(AGENTS.values()), faults: bool = True,
          page: str = "") -> Matrix:
    """Every agent's rows against the reference server at `base_url` (only the clean ones without `faults`); a row
    that differs from what `page` says is run again."""
    published = published_lines(page)
    with ThreadPoolExecutor(WORKERS) as pool:
        return {agent.name: agent_rows(agent, base_url, pool, faults, published.get(agent.title))
                for agent in agents}


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
HEADINGS = {"agent.request.accepted": "accepted", "agent.tool.ran_with_arguments_sent": "tool run",
            "agent.answer.reached_user": "answer", "agent.loop.bounded": "no loop", "agent.error.none_shown": "no error"}
CLEAN = "clean"


def _cell(row: Row, check: str, outcome: Outcome | None) -> str:
    if row.raced and check not in DECIDED_BY_THE_SERVER:
        return RACED
    return "·" if outcome is None else OUTCOME_STYLES[outcome].symbol


def grade_cell(row: Row) -> str:
    return RACED if row.grade is None else f"{STATUS_STYLE[row.grade][1]} {row.grade}"


def row_line(row: Row) -> str:
    server = CLEAN if row.fault is None else f"`{row.fault}`"
    cells = " | ".join(_cell(row, check, outcome) for check, outcome in row.outcomes)
    return f"| {server} | {grade_cell(row)} | {cells} | {row.words.replace('|', '∣')} |"


def section(matrix: Matrix, versions: dict[str, str], digest: str) -> str:
    """The generated part of docs/agents.md: a table per agent, then the defects that change nothing it gets."""
    lines = [START, f"<!-- made from inputs {digest} -->"]
    for name, rows in matrix.items():
        agent = AGENTS[name]
        lines += ["", f"### {agent.title} {versions.get(name, '')}".rstrip(), "",
                  *([f"Measured {agent.measured_as}.", ""] if agent.measured_as else []),
                  f"| server | grade | {' | '.join(HEADINGS[check.id] for check in AGENT_CHECKS)} | "
                  f"what {agent.title} did |",
                  "| --- | --- |" + " :-: |" * len(AGENT_CHECKS) + " --- |"]
        lines += [row_line(row) for row in rows if not row.unchanged]
        same = [f"`{row.fault}`" for row in rows if row.unchanged]
        if same:
            lines += ["", f"Defects that change none of the answers {agent.title} gets, so it does what it does on the "
                          f"clean server: {', '.join(same)}."]
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
    """The page's line for each agent against each server (None: the clean one), by the agent's title: the rows of
    its table, and for the defects it names as changing nothing, the clean row's."""
    found: dict[str, dict[str | None, str]] = {}
    title = ""
    for line in page.partition(START)[2].partition(END)[0].splitlines():
        if line.startswith("### "):
            title = next(agent.title for agent in AGENTS.values() if line[4:].startswith(agent.title + " ")
                         or line[4:] == agent.title)
            found[title] = {}
        elif line.startswith("| ") and not line.startswith(("| server", "| ---")):
            server = line[2:].partition(" |")[0]
            found[title][None if server == CLEAN else server.strip("`")] = line
        elif line.startswith("Defects that change none"):
            for fault in re.findall(r"`([^`]+)`", line):
                found[title][fault] = found[title][None]
    return found


def published_outcomes(page: str) -> dict[str, dict[str | None, tuple[str, ...]]]:
    """What the page says each agent does against each server, as the symbols of its cells."""
    return {title: {server: tuple(cell.strip() for cell in line.strip("|").split(" | ")[2:2 + len(AGENT_CHECKS)])
                    for server, line in lines.items()} for title, lines in published_lines(page).items()}
