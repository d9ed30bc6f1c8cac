"""One run of one agent on one task against a target: a sandbox holding the task's file, a relay in front of the
target, the agent started with its configuration pointing at the relay, and everything kept when it ends — what
it showed (its AgentOutcome), the relayed exchanges, how it ended, its exit status and stderr. Whatever happens,
the agent's whole process group is stopped and reaped, the relay closed and the sandbox removed."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from lmconform.agents.agent import Agent
from lmconform.agents.install import pinned_version, unavailable
from lmconform.agents.outcome import (
    EXITED,
    LAST_OUTPUT_LINES,
    OUTPUT_LIMIT,
    REQUEST_LIMIT,
    TIME_LIMIT,
    AgentRun,
    Limits,
)
from lmconform.agents.relay import Relay
from lmconform.agents.sandbox import create_sandbox, remove_sandbox, start, stop, wait
from lmconform.agents.versions import default_node_modules
from lmconform.target import Target

FILE_PLACEHOLDER = "{file}"  # where a task names the absolute path of the sandbox's file
ENDINGS = {"exited": EXITED, "deadline": TIME_LIMIT, "stopped": REQUEST_LIMIT, "flood": OUTPUT_LIMIT}


def run_agent(agent: Agent, target: Target, task: str, secret: str, limits: Limits,
              node_modules: Path | None = None, model: str | None = None, file_words: int = 0,
              environment: Mapping[str, str] | None = None) -> AgentRun:
    """`agent` asked to do `task` (its `{file}` the sandbox's file, which holds `secret` after `file_words` words of
    filler) against `target`, given the model id `model` (an alias the relay sends the target's own id for) or the
    target's own; `environment`: variables set in the agent's environment beside its own (a way round)."""
    node_modules = node_modules or default_node_modules()
    run = AgentRun(agent.name, agent.title, agent.version(node_modules) or pinned_version(agent), task, secret, limits)
    run.unavailable = unavailable(agent, node_modules)
    run.prediction = agent.prediction(run.version)
    binary = agent.binary(node_modules)
    if run.unavailable or binary is None:
        return run
    sandbox = create_sandbox(secret, file_words)
    started = time.monotonic()
    try:
        asked = task.replace(FILE_PLACEHOLDER, str(sandbox.secret_file))
        run.sandbox = str(sandbox.root)
        run.task = run.shown(asked)
        with Relay(target, limits.requests, alias=model) as relay:
            launch = agent.launch(binary, sandbox, relay.base_url, model or target.model, asked)
            process = start(launch.argv, sandbox, {**launch.environment, **(environment or {})})
            why = "exited" if process.start_error else wait(process, limits.seconds, relay.limit_reached.is_set)
            stop(process, ended=why == "exited")
        run.exchanges, run.requests = relay.exchanges, relay.requests
        run.ended = REQUEST_LIMIT if relay.limit_reached.is_set() else ENDINGS[why]
        run.exit_status = process.exit_status
        run.exit_text = process.start_error or process.exit_text()
        run.stderr = process.stderr_text()
        run.last_output = "\n".join(f"{line.stream}: {line.text[:300]}"
                                    for line in process.lines[-LAST_OUTPUT_LINES:])
        run.outcome = agent.outcome([message.value for message in process.stdout.messages])
    finally:
        remove_sandbox(sandbox)
        run.duration_s = time.monotonic() - started
    return run
