"""What a coding agent sends, recorded: the agent does its case's task against the recording endpoint (lmconform
record), and each request it sends is kept as `<cases>/<api>/recorded-<agent>-<version>-N.json`, the version's dots as
dashes as in every case's name (`recorded-claude-code-2-1-332-1.json`; `lmconform agents record`, `make
record-agents`; `lmconform agents diff` records two versions this way into a folder of its own).

What an agent sends depends on the model id it is given as well as on its version: Claude Code asks a `claude-*` model
without the system turn and `output_config` it sends a local one. Each agent is recorded with each shape of model id
its profile names (Agent.model_shapes); the first shape's cases are named as above, another's carry its name
(`recorded-claude-code-2-1-332-claude-id-1.json`), and each case's provenance names its shape.

These cases replay against any endpoint like every recorded case: a server is checked against what Claude Code
2.1.332 sends without running Claude Code. The recorder names the client by its user agent (`claude-cli 2.1.332`)
and scrubs the recording machine from them (lmconform.record.scrub). What an agent sends runs to tens of kilobytes
(a system prompt, a dozen tools with long descriptions); every text longer than TRIM_CHARS is cut there, which keeps
every key, every tool and every schema, keeps the package small, and lets a server with a small context answer
them as it would a user's first turns. The cut is marked in the text and said in the provenance, as is the output
cap, which is RECORDED_CAP here (above the least thinking budget, for a request that asks for extended thinking).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmconform.agents.agent import Agent, ModelShape
from lmconform.agents.install import InstallError
from lmconform.agents.outcome import AgentRun, Limits
from lmconform.agents.runner import run_agent
from lmconform.api_table import api_of
from lmconform.cases import Case, cases_folder, load_cases
from lmconform.files import write_json_atomically
from lmconform.record.kept import slug
from lmconform.record.server import RecordingServer
from lmconform.target import Target

TRIM_CHARS = 300
TRIMMED = "…[cut by lmconform]"
# The output cap a recorded request asks for. The agents ask for all a model can give (Claude Code and opencode ask
# for 32,000 tokens), and a real model asked so talks until its context is full: minutes a request on a laptop.
RECORDED_CAP = 64
# Extended thinking (Anthropic's, which Claude Code asks a `claude-*` model for) takes a budget of at least 1,024 tokens
# and an output cap above it: such a request keeps that least budget, and its cap is RECORDED_CAP above it.
THINKING_FLOOR = 1024
RECORDING_LIMITS = Limits(seconds=120, requests=20)
DESCRIPTION_CHARS = 80  # the case format's longest description


@dataclass(frozen=True)
class Recording:
    """One run of an agent recorded: the shape of model id it was given, the run, the case files written, and the
    requests it sent as (method, path, body, headers), to send again."""

    shape: ModelShape
    run: AgentRun
    written: tuple[Path, ...]
    requests: tuple[tuple[str, str, Any, dict[str, str]], ...]


def trimmed(value: Any) -> Any:
    """`value` with every string longer than TRIM_CHARS cut there and marked."""
    if isinstance(value, str):
        return value if len(value) <= TRIM_CHARS else value[:TRIM_CHARS] + TRIMMED
    if isinstance(value, dict):
        return {key: trimmed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [trimmed(item) for item in value]
    return value


def _capped(body: dict, cap: str) -> str:
    """The request's output cap set to RECORDED_CAP (above the least thinking budget, where it asks for one), and
    what was changed, for the case's note."""
    thinking = body.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    said = ""
    if isinstance(thinking, dict) and isinstance(budget, int) and budget > THINKING_FLOOR:
        said = f"; `thinking.budget_tokens` {budget} as sent, {THINKING_FLOOR} here"
        thinking["budget_tokens"] = THINKING_FLOOR
    least = RECORDED_CAP + (THINKING_FLOOR if isinstance(budget, int) else 0)
    said += f"; `{cap}` {body[cap]} as sent, {least} here"
    body[cap] = least
    return said


def agent_case(agent: Agent) -> Case:
    """The agent's case of the `agents` source given the target's own model id: the task it is recorded doing."""
    return next(case for case in load_cases(agent.api) if case.agent is not None and case.agent.name == agent.name
                and case.agent.model_shape is None and not case.agent.file_words)


def overflow_case(agent: Agent) -> Case | None:
    """The agent's case whose file is longer than the context (how it ends on an overflow), if it has one."""
    return next((case for case in load_cases(agent.api) if case.agent is not None and case.agent.name == agent.name
                 and case.agent.file_words), None)


def stem(agent: Agent, version: str, shape: ModelShape) -> str:
    """The name of the shape's recorded cases, before their number."""
    first = shape == agent.model_shapes[0]
    return f"recorded-{agent.name}-{slug(version)}" + ("" if first else f"-{shape.name}-id")


def record(agent: Agent, folder: Path, node_modules: Path, say: Callable[[str], None] = print,
           case: Case | None = None) -> list[Recording]:
    """The agent's requests, doing its case's task (or `case`'s) against the reference server with each shape of
    model id, as new case files in `folder` (those of an earlier recording of the same version removed first)."""
    version = agent.version(node_modules) or "unknown"
    for old in cases_folder(folder, agent.api).glob(f"recorded-{agent.name}-{slug(version)}-*.json"):
        old.unlink()
    case = case or agent_case(agent)
    return [_record_shape(agent, shape, version, folder, node_modules, case, say) for shape in agent.model_shapes]


def _record_shape(agent: Agent, shape: ModelShape, version: str, folder: Path, node_modules: Path, case: Case,
                  say: Callable[[str], None]) -> Recording:
    if case.agent is None:
        raise ValueError(f"{case.id} is no agent's task")
    with RecordingServer(folder, stem=stem(agent, version, shape), report=say) as server:
        run = run_agent(agent, Target(base_url=server.base_url, model=shape.model), case.agent.task,
                        case.agent.secret, RECORDING_LIMITS, node_modules)
        written = tuple(server.recorder.written)
        requests = run.sent(server.base_url)
    if run.unavailable:
        raise InstallError(run.unavailable)
    cap = api_of(agent.api).output_cap
    for path in written:
        document = json.loads(path.read_text())
        document["request"] = trimmed(document["request"])
        document["provenance"]["model_shape"] = shape.name
        # Unique across every version and shape kept beside it: `Claude Code 2.1.332 (claude id) #1: streamed message`.
        what = re.sub(r" #\d+$", "", document["description"].partition(": ")[2])
        number = path.stem.rpartition("-")[2]
        document["description"] = f"{agent.title} {version} ({shape.name} id) #{number}: {what}"[:DESCRIPTION_CHARS]
        document["provenance"]["note"] += (f"; recorded doing the task of {case.id}, given the model id {shape.model} "
                                           f"({shape.meaning}); every text of the request longer than {TRIM_CHARS} "
                                           f"characters is cut there (marked {TRIMMED!r})")
        body = document["request"].get("body")
        if cap and isinstance(body, dict) and cap in body:
            document["provenance"]["note"] += _capped(body, cap)
        # What an agent sends, it sends to every server, and a refusal stops it: its request is to be answered 2xx.
        # Where the reference server's dialect refuses it (Codex's tool types on LM Studio's Responses API), the
        # finding's known cause says so, and expects it of that dialect (lmconform/verdicts/causes.toml).
        document["expect"]["status"] = "success"
        write_json_atomically(path, document)
    say(f"{run.label} given {shape.meaning} ({shape.model}): {run.ended} ({run.exit_text}), {len(written)} requests "
        "kept")
    return Recording(shape, run, written, requests)
