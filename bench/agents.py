"""`bench agents`: a coding agent doing its scripted task through lmconform (a sandbox, the relay and its capture,
its output read and kept) against the same agent in the same sandbox sent straight to the reference server, from
its start to its end; goal 1.2x. Each pinned agent is a line of its own; one that is not installed is skipped."""

from __future__ import annotations

from bench.timing import fastest
from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent
from lmconform.agents.install import unavailable
from lmconform.agents.outcome import Limits
from lmconform.agents.runner import run_agent
from lmconform.agents.sandbox import create_sandbox, remove_sandbox, start, stop, wait
from lmconform.agents.versions import default_node_modules
from lmconform.cases import load_cases
from lmconform.reference import ReferenceServer
from lmconform.reference.wire import DEFAULT_MODEL
from lmconform.target import Target

LIMITS = Limits(seconds=120, requests=20)
ROUNDS = {"opencode": 5}  # seconds a run; the others take about one
DEFAULT_ROUNDS = 7


def _task(agent: Agent) -> tuple[str, str]:
    case = next(case for case in load_cases(agent.api) if case.agent is not None and case.agent.name == agent.name)
    return case.agent.task, case.agent.secret


def straight(agent: Agent, base_url: str) -> int:
    """The agent in a sandbox, pointed at the server itself: what a user's run costs without lmconform."""
    task, secret = _task(agent)
    node_modules = default_node_modules()
    sandbox = create_sandbox(secret)
    try:
        asked = task.replace("{file}", str(sandbox.secret_file))
        launch = agent.launch(agent.binary(node_modules), sandbox, base_url, DEFAULT_MODEL, asked)
        process = start(launch.argv, sandbox, launch.environment)
        ended = wait(process, LIMITS.seconds, lambda: False) == "exited"
        stop(process, ended)
        return len(process.stdout.messages)
    finally:
        remove_sandbox(sandbox)


def relayed(agent: Agent, target: Target) -> int:
    """The same, as `--agents` runs it (Codex is refused by the reference server's dialect on both sides alike)."""
    task, secret = _task(agent)
    return len(run_agent(agent, target, task, secret, LIMITS).exchanges)


def bench() -> list[str]:
    lines = []
    with ReferenceServer() as server:
        target = Target(base_url=server.base_url, model=DEFAULT_MODEL)
        for name, agent in AGENTS.items():
            missing = unavailable(agent, default_node_modules())
            if missing:
                lines.append(f"bench agents: {agent.title} skipped: {missing}")
                continue
            (ours, _), (floor, _) = fastest(ROUNDS.get(name, DEFAULT_ROUNDS), (relayed, agent, target),
                                            (straight, agent, server.base_url))
            lines.append(f"bench agents: {agent.title} {ours / floor:.2f}x straight to the server "
                         f"({ours:.2f} s through lmconform, {floor:.2f} s straight)")
    return lines
