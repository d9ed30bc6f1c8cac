"""opencode: it speaks chat completions through the AI SDK's `@ai-sdk/openai-compatible` provider, configured in an
`opencode.json` of the project folder, and is run headless with `opencode run --format json TASK`, which writes one
JSON event per line: `step_start`, `text`, `tool_use` (a tool with its input, output and status), `step_finish`,
`error`.

opencode takes its project folder, and so its `opencode.json`, from the PWD variable, not from the working
directory of its process: a harness that sets only the latter gets opencode's default model (the sandbox sets both).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lmconform.agents.agent import Agent, Launch, cpu_has_avx2
from lmconform.agents.outcome import AgentOutcome, ToolRun
from lmconform.agents.relay import AGENT_KEY
from lmconform.agents.sandbox import Sandbox

# opencode's own switches (its CLI documentation): no update checks, model catalogue download, default plugins,
# language-server downloads or sharing, and none of Claude Code's files read as its own.
QUIET = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
}
PROVIDER = "lmconform"


def project_config(base_url: str, model: str) -> dict:
    """The project's opencode.json: the relay as an OpenAI-compatible provider with the run's model, used for the
    session and for its title alike."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": "lmconform relay",
                                "options": {"baseURL": base_url + "/v1", "apiKey": AGENT_KEY},
                                "models": {model: {"name": model}}}},
        "model": f"{PROVIDER}/{model}",
        "small_model": f"{PROVIDER}/{model}",
        "autoupdate": False,
        "share": "disabled",
    }


class Opencode(Agent):
    name = "opencode"
    title = "opencode"
    package = "opencode-ai"
    api = "chat"
    client = "opencode"
    measured = "1.18.33"
    download_mb = 120

    def binaries(self, os_name: str, arch: str) -> tuple[str, ...]:
        # Its own wrapper picks the baseline build on a CPU without AVX2.
        builds = ("", "-baseline") if cpu_has_avx2() else ("-baseline", "")
        return tuple(f"opencode-{os_name}-{arch}{build}{libc}/bin/opencode" for build in builds
                     for libc in ("", "-musl"))

    def launch(self, binary: Path, sandbox: Sandbox, base_url: str, model: str | None, task: str) -> Launch:
        config = project_config(base_url, model or "default")
        (sandbox.work / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
        return Launch((str(binary), "run", "--pure", "--format", "json", task), sandbox.environment(**QUIET))

    def outcome(self, events: list[Any]) -> AgentOutcome:
        runs: list[ToolRun] = []
        texts: list[str] = []
        errors: list[str] = []
        for event in events:
            if not isinstance(event, dict):
                continue
            part = _table(event, "part")
            if event.get("type") == "text" and part.get("text"):
                texts.append(str(part["text"]))
            elif event.get("type") == "tool_use":
                state = _table(part, "state")
                failed = state.get("status") != "completed"
                runs.append(ToolRun(str(part.get("tool", "")), state.get("input"),
                                    str(state.get("error") if failed else state.get("output") or ""), failed))
            elif event.get("type") == "error":
                errors.append(_error_text(event.get("error")))
        return AgentOutcome(texts[-1] if texts else None, tuple(runs), tuple(errors))


def _table(holder: dict, key: str) -> dict:
    """The object `holder` keeps under `key`, or an empty one where it keeps something else."""
    value = holder.get(key)
    return value if isinstance(value, dict) else {}


def _error_text(error: Any) -> str:
    """An opencode error as it shows it: its message, from wherever its kind of error keeps it."""
    if isinstance(error, dict):
        said = _table(error, "data").get("message") or error.get("message")
        return f"{error.get('name', 'Error')}: {said}" if said else json.dumps(error)[:400]
    return str(error)
