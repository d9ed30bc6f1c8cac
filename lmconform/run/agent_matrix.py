"""The fault × agent matrix: each defect of the reference server's catalogue of an agent's API (and every HTTP
defect) against the agent, on the task of its case: which server defects break it, and how, in its own words. A row
per defect, a cell per agent check (✓ ✗ ⚠ · ~). docs/agents.md publishes it for the pinned versions (`make
agents-matrix`); `lmconform agents matrix claude-code@2.1.340` makes it for any version and lists the cells that
changed against the pinned version's, green → red first.

The defects of an overflow's refusal (those that prove agent.overflow.ended_clearly) are played on the agent's other
task, a file longer than the context (its case's `file_words`), which its ordinary task never overflows; their rows
follow a row of that task on the clean server.

The defects only the Responses API's WebSocket mode meets (those whose every check is one of that mode's, and the
server's refusal of the upgrade) change nothing an agent run as it is by default gets; they are played again with
the agent set to use that mode (Codex's `supports_websockets = true`), in rows of their own after a row of the clean
server in that mode. Those rows say what the mode costs a user who turns it on; the agent's profile, which predicts
what it does as it is run by default, is measured without them.

A defect that changes none of the answers the agent gets changes nothing the agent does, and its row is the clean
row; it is found without running the agent. The agent's clean run is replayed, request by request, to the server
with the defect and to the clean server: when every answer is the same (timestamps and random request ids aside,
which no defect sets to another integer or id), the agent in a run with the defect would be sent the very answers
of its clean run at every step. That holds because the reference server's defects act on the form of an answer
(its events, its fields, its status), never on the values a run varies (session ids, the sandbox's folder), so a
defect that leaves the clean run's answers alone leaves those of any run of the same task alone. Every other defect
is run, a few agents at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lmconform.agents.agent import Agent
from lmconform.agents.outcome import REQUEST_LIMIT, TIME_LIMIT, AgentRun, Limits
from lmconform.agents.runner import run_agent
from lmconform.cases import Case
from lmconform.checks.evaluate import evaluate
from lmconform.checks.registry import REGISTRY
from lmconform.fuzz.agents import observations
from lmconform.record.agents import agent_case, overflow_case
from lmconform.reference import FAULTS
from lmconform.target import Target
from lmconform.vocabulary import BREAKS, LIMITED, OUTCOME_STYLES, STATUS_STYLE, WORKS, Outcome
from lmconform.wire.http import HttpExchange, send

AGENT_CHECKS = tuple(check for check in REGISTRY.values() if check.kind == "agent")
HEADINGS = {"agent.request.accepted": "accepted", "agent.tool.ran_with_arguments_sent": "tool run",
            "agent.answer.reached_user": "answer", "agent.loop.bounded": "no loop", "agent.error.none_shown": "no error",
            "agent.overflow.ended_clearly": "overflow"}
OVERFLOW_CHECK = "agent.overflow.ended_clearly"
# The defects played on the task whose file is past the context: an overflow's refusal broken each way.
OVERFLOW_FAULTS = REGISTRY[OVERFLOW_CHECK].proven_by
# Limits of a scripted run: two generations take a second or two; a defect that makes an agent wait or retry is
# shown by the time limit, and a loop by the request limit.
LIMITS = Limits(seconds=30, requests=12)
WORKERS = 4  # agents at once: most of a run is waiting on the other side
RERUNS = 2  # more runs of a row that does not come out as the page (or the other version) says
READ_TIMEOUT_S = 5.0
WORDS_CHARS = 160
# What differs between two answers to the same request on the clean server: the time, and an error's random id.
_VOLATILE = (re.compile(rb'"(created|created_at)":\s*\d+'), re.compile(rb'"request_id":\s*"req_[0-9a-f]+"'))
# Rows that are a race inside the agent, seen both ways on the same inputs (at the version its profile was measured
# on): what the agent does depends on which of two of its own threads comes first, so on the machine's load, not on
# the server. The cells the race decides show RACED and the words say both ways; the cell it leaves alone, whether
# lmconform's checks accept the answers the agent got, is shown and compared as in any row.
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
CLEAN = "clean"
CLEAN_OVERFLOW = "clean, file past the context"  # the clean server, on the task whose file is past its context
OVER_SOCKET = ", over the WebSocket"  # a row played with the agent in its WebSocket mode
CLEAN_SOCKET = CLEAN + OVER_SOCKET
SOCKET_CHECKS = "responses.websocket."
# The server that does not offer the WebSocket mode (LM Studio, llama-server): what an agent set to use it then does.
SOCKET_VARIANTS = ("responses-websocket-not-offered",)
# A cell that changed from green to red: the check held (✓) in one matrix, and failed (✗) or reached no verdict (⚠)
# in the other.
GREEN = OUTCOME_STYLES[Outcome.OK].symbol
RED = (OUTCOME_STYLES[Outcome.FAILED].symbol, OUTCOME_STYLES[Outcome.ERROR].symbol)


@dataclass(frozen=True)
class Row:
    fault: str | None  # None: the clean server
    outcomes: tuple[tuple[str, Outcome | None], ...]  # per agent check, its verdict (None: nothing to judge)
    words: str  # what the agent did, in its own words
    unchanged: bool = False  # the defect changes none of the answers the agent gets: the clean row, not run
    raced: bool = False  # a race inside the agent (RACES): its cells other than DECIDED_BY_THE_SERVER are RACED
    overflow: bool = False  # played on the task whose file is past the context
    socket: bool = False  # played with the agent in its WebSocket mode

    @property
    def key(self) -> str | None:
        """The row among its agent's: the defect, None for the clean server, CLEAN_OVERFLOW for the clean server on
        the overflow task, CLEAN_SOCKET for the clean server with the agent in its WebSocket mode."""
        if self.fault is None:
            return CLEAN_OVERFLOW if self.overflow else CLEAN_SOCKET if self.socket else None
        return self.fault + OVER_SOCKET if self.socket else self.fault

    @property
    def server(self) -> str:
        if self.key is None:
            return CLEAN
        return self.key if self.fault is None else f"`{self.fault}`" + (OVER_SOCKET if self.socket else "")

    def cells(self) -> tuple[str, ...]:
        """The row's cell per agent check: ✓ ✗ ⚠ (OK, FAILED, ERROR), · nothing to judge, ~ a race."""
        return tuple(RACED if self.raced and check not in DECIDED_BY_THE_SERVER
                     else "·" if outcome is None else OUTCOME_STYLES[outcome].symbol
                     for check, outcome in self.outcomes)

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

    def grade_cell(self) -> str:
        return RACED if self.grade is None else f"{STATUS_STYLE[self.grade][1]} {self.grade}"


def faults_of(agent: Agent) -> list[str]:
    return [name for name, fault in FAULTS.items() if fault.api in (agent.api, "http") and not fault.variant]


def socket_faults() -> tuple[str, ...]:
    """The defects only the Responses API's WebSocket mode meets: every check a fault is proof of is one of that
    mode's; then the server's refusal of the upgrade."""
    proves: dict[str, set[str]] = {}
    for check in REGISTRY.values():
        for fault in check.proven_by:
            proves.setdefault(fault, set()).add(check.id)
    return (*(name for name, checks in proves.items()
              if name in FAULTS and all(check.startswith(SOCKET_CHECKS) for check in checks)), *SOCKET_VARIANTS)


def socket_faults_of(agent: Agent) -> list[str]:
    """The defects played on the agent in its WebSocket mode: none for an agent without one."""
    return [name for name in socket_faults() if FAULTS[name].api == agent.api] \
        if agent.over_websocket() is not None else []


def row_of(agent: Agent, run: AgentRun, target: Target, fault: str | None, case: Case, socket: bool = False) -> Row:
    """The row of `agent`'s run against the server with `fault` (None: the clean one) on `case`'s task."""
    examples = observations(case, run, target)
    outcomes = []
    for check in AGENT_CHECKS:
        verdicts = [verdict for observed in examples if (verdict := evaluate(check, observed)) is not None]
        outcomes.append((check.id, max((verdict.outcome for verdict in verdicts), key=lambda o: o.severity)
                         if verdicts else None))
    race = RACES.get((agent.name, fault or ""))
    return Row(fault, tuple(outcomes), f"a race: {race}" if race else words(run), raced=bool(race),
               overflow=bool(case.agent_task.file_words), socket=socket)


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
    said = _over_socket(run) + said
    said = _RUN_IDS.sub(lambda found: (found[1] or "") + "…", run.shown(" ".join(said.split())))
    return said if len(said) <= WORDS_CHARS else said[:WORDS_CHARS - 1] + "…"


def _over_socket(run: AgentRun) -> str:
    """How a run that opened a WebSocket went on: over it, or over HTTP after the sockets it gave up."""
    sockets = [exchange for exchange in run.exchanges if not isinstance(exchange, HttpExchange)]
    if not sockets:
        return ""
    if not run.http_exchanges:
        return "over its WebSocket, "
    return f"over HTTP after {len(sockets)} socket{'s' if len(sockets) > 1 else ''} given up, "


def _answer(exchange: HttpExchange) -> tuple[Any, ...]:
    body = exchange.body
    for volatile in _VOLATILE:
        body = volatile.sub(lambda found: found[0].split(b":")[0] + b":0", body)
    return exchange.status, exchange.content_type, body, exchange.error_kind


def unchanged(requests: tuple[tuple[str, str, Any, dict[str, str]], ...], clean: Target, faulty: Target) -> bool:
    """Whether every request, with the agent's own headers, gets the same answer from the server with the defect as
    from the clean one."""
    for method, path, body, headers in requests:
        if _answer(send(faulty, method, path, body, forwarded=headers)) != _answer(
                send(clean, method, path, body, forwarded=headers)):
            return False
    return bool(requests)


def reference_target(base_url: str) -> Target:
    return Target(base_url=base_url, model="lmconform-reference", read_timeout=READ_TIMEOUT_S,
                  fingerprint={"kind": "reference"})


def agent_rows(agent: Agent, base_url: str, pool: ThreadPoolExecutor, faults: Iterable[str] | None = None,
               settled: Callable[[Row], bool] = lambda row: True, node_modules: Path | None = None,
               case: Case | None = None) -> list[Row]:
    """The clean row, then a row per defect of the agent's API (`faults`: these only), in catalogue order, the
    defects of an overflow's refusal after the clean server's row on the overflow task. A row that
    is not `settled` (it does not come out as the page, or the other version, says) is run again, RERUNS times at
    most: an agent's run is a race between its threads (a tool started or not before a stream's error is read), and
    a row is what the agent does, not what it did once."""
    target = reference_target(base_url)
    case = case or agent_case(agent)
    overflowing = overflow_case(agent)
    chosen = faults_of(agent) if faults is None else [fault for fault in faults_of(agent) if fault in set(faults)]

    measured = agent.as_measured()  # Codex with the tools LM Studio's dialect refuses turned off
    over_socket = agent.over_websocket()
    socket_chosen = [fault for fault in socket_faults_of(agent) if faults is None or fault in set(faults)]

    def run_against(fault: str | None, task: Case, socket: bool = False) -> tuple[AgentRun, Target]:
        faulty = target if fault is None else replace(target, base_url=f"{base_url}/faults/{fault}")
        runner = over_socket.as_measured() if socket and over_socket is not None else measured
        return run_agent(runner, faulty, task.agent_task.task, task.agent_task.secret, LIMITS, node_modules,
                         file_words=task.agent_task.file_words), faulty

    def task_of(fault: str | None) -> Case:
        return overflowing if overflowing is not None and fault in OVERFLOW_FAULTS else case

    clean_run, _ = run_against(None, case)
    clean = row_of(agent, clean_run, target, None, case)
    requests = clean_run.sent(base_url)
    rows: dict[str, Row] = {}
    pending = {}
    for fault in chosen:
        if task_of(fault) is case and unchanged(requests, target,
                                                replace(target, base_url=f"{base_url}/faults/{fault}")):
            rows[fault] = replace(clean, fault=fault, unchanged=True)
        else:
            pending[fault] = pool.submit(run_against, fault, task_of(fault))
    overflow_rows = []
    if overflowing is not None and (faults is None or any(fault in OVERFLOW_FAULTS for fault in chosen)):
        overflow_run, _ = run_against(None, overflowing)
        overflow_rows = [row_of(agent, overflow_run, target, None, overflowing)]
    for fault, future in pending.items():
        run, faulty = future.result()
        rows[fault] = row_of(agent, run, faulty, fault, task_of(fault))
    for fault in pending:
        for _ in range(RERUNS):
            if settled(rows[fault]):
                break
            run, faulty = run_against(fault, task_of(fault))
            rows[fault] = row_of(agent, run, faulty, fault, task_of(fault))
    overflow_rows += [rows[fault] for fault in chosen if fault in rows and task_of(fault) is not case]
    return [clean, *(rows[fault] for fault in chosen if fault in rows and task_of(fault) is case), *overflow_rows,
            *_socket_rows(agent, socket_chosen, run_against, target, case, pool, settled)]


def _socket_rows(agent: Agent, chosen: list[str], run_against: Callable[..., tuple[AgentRun, Target]],
                 target: Target, case: Case, pool: ThreadPoolExecutor, settled: Callable[[Row], bool]) -> list[Row]:
    """The clean server's row with the agent in its WebSocket mode, then a row per defect of that mode. None is
    found unchanged by a replay: the relay passes a socket's messages on without reading them."""
    if not chosen:
        return []
    clean_run, _ = run_against(None, case, True)
    rows = [row_of(agent, clean_run, target, None, case, socket=True)]
    pending = {fault: pool.submit(run_against, fault, case, True) for fault in chosen}
    for fault, future in pending.items():
        run, faulty = future.result()
        row = row_of(agent, run, faulty, fault, case, socket=True)
        for _ in range(RERUNS):
            if settled(row):
                break
            run, faulty = run_against(fault, case, True)
            row = row_of(agent, run, faulty, fault, case, socket=True)
        rows.append(row)
    return rows


def row_line(row: Row) -> str:
    """The row as a line of its agent's table: the server, the agent's grade, a cell per agent check, its words."""
    return f"| {row.server} | {row.grade_cell()} | {' | '.join(row.cells())} | {row.words.replace('|', '∣')} |"


def table(agent: Agent, heading: str, rows: list[Row]) -> list[str]:
    """The agent's table under `heading` (`### Claude Code 2.1.332`), then the defects that change nothing it gets."""
    lines = [heading, "", *([f"Measured {agent.measured_as}.", ""] if agent.measured_as else []),
             f"| server | grade | {' | '.join(HEADINGS[check.id] for check in AGENT_CHECKS)} | what {agent.title} "
             "did |", "| --- | --- |" + " :-: |" * len(AGENT_CHECKS) + " --- |"]
    lines += [row_line(row) for row in rows if not row.unchanged]
    same = [f"`{row.fault}`" for row in rows if row.unchanged]
    if same:
        lines += ["", f"Defects that change none of the answers {agent.title} gets, so it does what it does on the "
                      f"clean server: {', '.join(same)}."]
    return lines


@dataclass(frozen=True)
class CellChange:
    """A cell of one row that reads differently in two matrices (or two runs) of the same agent."""

    agent: str  # its users' name for it: `Claude Code`
    server: str  # `clean`, or the defect in backquotes
    column: str  # the column's heading: `answer`
    before: str
    after: str

    @property
    def green_to_red(self) -> bool:
        """A check's cell from ✓ to ✗ or ⚠, or the grade from works to breaks."""
        return self.before.startswith(GREEN) and self.after.startswith(RED)

    def line(self) -> str:
        return f"{self.agent}, {self.server}, {self.column}: {self.before} → {self.after}"


def changed_cells(agent: str, before: list[Row], after: list[Row]) -> list[CellChange]:
    """Each cell of a row of `after` that differs from the same row of `before` (matched by the server), green → red
    first, then in the order of the rows and columns."""
    earlier = {row.server: row for row in before}
    found = [CellChange(agent, row.server, column, was, now) for row in after if row.server in earlier
             for column, was, now in zip(("grade", *(HEADINGS.get(check, check) for check, _ in row.outcomes)),
                                         (earlier[row.server].grade_cell(), *earlier[row.server].cells()),
                                         (row.grade_cell(), *row.cells()), strict=True)
             if was != now]
    return sorted(found, key=lambda change: not change.green_to_red)


@dataclass(frozen=True)
class VersionsCompared:
    """One agent's matrix at two versions, and the cells that changed from the first's to the second's."""

    agent: Agent
    versions: tuple[str, str]
    rows: tuple[list[Row], list[Row]]
    changes: list[CellChange]

    @property
    def green_to_red(self) -> list[CellChange]:
        return [change for change in self.changes if change.green_to_red]

    def markdown(self) -> str:
        """The other version's table, then each cell that changed from the baseline's, green → red first."""
        (baseline, other), title = self.versions, self.agent.title
        lines = table(self.agent, f"### {title} {other}", self.rows[1])
        said = self.agent.prediction(other)
        if said:
            lines += ["", f"{said}; its races (~) are those measured on {self.agent.measured}."]
        lines += ["", f"#### {title} {other} against {baseline}", ""]
        if not self.changes:
            lines.append(f"No cell changed: {title} {other} does against each defect what {baseline} does.")
        else:
            broke = len(self.green_to_red)
            lines += [f"{len(self.changes)} cell{'s' if len(self.changes) != 1 else ''} changed, {broke} from green "
                      "to red:", "", f"| server | check | {baseline} | {other} |", "| --- | --- | :-: | :-: |"]
            lines += [f"| {change.server} | {change.column}{' (green → red)' if change.green_to_red else ''} | "
                      f"{change.before} | {change.after} |" for change in self.changes]
        return "\n".join(lines) + "\n"


def compare_versions(agent: Agent, baseline: tuple[str, Path], other: tuple[str, Path], base_url: str,
                     faults: Iterable[str] | None = None, case: Case | None = None) -> VersionsCompared:
    """`agent`'s matrix at each version (its version and node_modules folder) against the reference server at
    `base_url`; a row of the other version whose cells differ from the baseline's is run again before it counts."""
    with ThreadPoolExecutor(WORKERS) as pool:
        before = agent_rows(agent, base_url, pool, faults, node_modules=baseline[1], case=case)
        expected = {row.key: row.cells() for row in before}
        after = agent_rows(agent, base_url, pool, faults, lambda row: expected.get(row.key) in (None, row.cells()),
                           other[1], case)
    return VersionsCompared(agent, (baseline[0], other[0]), (before, after), changed_cells(agent.title, before, after))
