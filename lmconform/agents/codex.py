"""Codex CLI, OpenAI's coding agent: it speaks the Responses API (`POST /v1/responses`) through a `model_providers`
entry of its config.toml (`wire_api = "responses"`), and is run headless with `codex exec --json TASK`, which writes
one JSON event per line: `thread.started`, `turn.started`, `item.started` / `item.completed` (its messages, the
commands it ran, errors), `turn.completed` or `turn.failed`, `error`.

Its only tool for reading a file is its shell. Codex runs the commands a model asks for in a sandbox of its own
(bubblewrap and seccomp on Linux); lmconform keeps Codex's defaults for `codex exec` (a read-only sandbox, no
approval asked), written out in the config, so a real model behind the relay can read files but change nothing.
Everything else is what a user gets by default, including the tools Codex offers: its `namespace` (sub-agents) and
`web_search` tools, which a server of LM Studio's dialect refuses (docs/agents.md says how to turn them off)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from lmconform.agents.agent import Agent, Launch
from lmconform.agents.outcome import AgentOutcome, ToolRun
from lmconform.agents.relay import AGENT_KEY
from lmconform.agents.sandbox import Sandbox

KEY_VARIABLE = "LMCONFORM_AGENT_KEY"
# What Codex says of a model it has no metadata for: true of any local model, and no fault of the server.
UNKNOWN_MODEL = "Model metadata for"
# What Codex says as it asks again: a stream it reconnects, or a turn it sends over HTTPS when its WebSocket failed.
RETRYING = ("Reconnecting", "reconnecting", "Falling back from WebSockets")


def config(base_url: str, model: str, websockets: bool = False) -> str:
    """Codex's config.toml for a run: the relay as its only provider; no update check, no analytics; a failed
    request retried once (Codex's default is four times, with growing pauses); with `websockets`, the provider
    offers the Responses API's WebSocket mode, which Codex then prefers (a provider of its own does not, by
    default)."""
    return "\n".join([
        f"model = {json.dumps(model)}",
        'model_provider = "lmconform"',
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        "check_for_update_on_startup = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[model_providers.lmconform]",
        'name = "lmconform relay"',
        f"base_url = {json.dumps(base_url + '/v1')}",
        f"env_key = {json.dumps(KEY_VARIABLE)}",
        'wire_api = "responses"',
        "request_max_retries = 1",
        "stream_max_retries = 1",
        *(["supports_websockets = true"] if websockets else []),
        "",
    ])


# Its sub-agents (a `namespace` tool) and `web_search`, off: the tools LM Studio's dialect refuses, as the known cause
# lmstudio-responses-function-tools-only advises (lmconform/verdicts/causes.toml).
FUNCTION_TOOLS_ONLY = ("--disable", "multi_agent", "-c", 'web_search="disabled"')


class Codex(Agent):
    name = "codex"
    title = "Codex CLI"
    package = "@openai/codex"
    api = "responses"
    client = "codex_exec"
    measured = "0.171.0"
    download_mb = 170

    def __init__(self, function_tools_only: bool = False, websockets: bool = False) -> None:
        self.function_tools_only = function_tools_only
        self.websockets = websockets
        self.measured_as = ("with its sub-agents and web search off (`codex exec --disable multi_agent -c "
                            "web_search='\"disabled\"'`), the tools LM Studio's dialect refuses: Codex as a user runs it "
                            "against such a server, which gets past its first request")

    def as_measured(self) -> Agent:
        return Codex(function_tools_only=True, websockets=self.websockets)

    def over_websocket(self) -> Agent:
        return Codex(function_tools_only=self.function_tools_only, websockets=True)

    def binaries(self, os_name: str, arch: str) -> tuple[str, ...]:
        return (f"@openai/codex-{os_name}-{arch}/vendor/*/bin/codex",)

    def launch(self, binary: Path, sandbox: Sandbox, base_url: str, model: str | None, task: str) -> Launch:
        codex_home = sandbox.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(config(base_url, model or "default", self.websockets))
        environment = sandbox.environment(CODEX_HOME=str(codex_home), **{KEY_VARIABLE: AGENT_KEY})
        tools = FUNCTION_TOOLS_ONLY if self.function_tools_only else ()
        return Launch((str(binary), "exec", *tools, "--json", "--skip-git-repo-check", task), environment)

    def outcome(self, events: list[Any]) -> AgentOutcome:
        runs: list[ToolRun] = []
        texts: list[str] = []
        errors: list[str] = []
        retries: list[str] = []
        notices: list[str] = []
        for event in events:
            if not isinstance(event, dict):
                continue
            kind, item = event.get("type"), event.get("item")
            item = item if isinstance(item, dict) else {}
            if kind == "item.completed" and item.get("type") == "agent_message" and item.get("text"):
                texts.append(str(item["text"]))
            elif kind == "item.completed" and item.get("type") == "command_execution":
                runs.append(ToolRun("", {"cmd": _inner_command(str(item.get("command", "")))},
                                    str(item.get("aggregated_output") or ""),
                                    item.get("status") != "completed" or item.get("exit_code") not in (0, None)))
            elif kind == "item.completed" and item.get("type") == "error":
                said = str(item.get("message", ""))
                (notices if said.startswith(UNKNOWN_MODEL) else retries if said.startswith(RETRYING)
                 else errors).append(said)
            elif kind in ("error", "turn.failed"):
                said = str(event.get("message") or (event.get("error") or {}).get("message") or kind)
                if said.startswith(RETRYING):
                    retries.append(said)
                elif said not in errors:
                    errors.append(said)
        return AgentOutcome(texts[-1] if texts else None, tuple(runs), tuple(errors), tuple(retries),
                            tuple(notices))


def _inner_command(command: str) -> str:
    """The command a model asked for, from the command line Codex ran it with (`/bin/bash -lc 'cat f'` → `cat f`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[1] in ("-lc", "-c"):
        return words[2]
    return command
