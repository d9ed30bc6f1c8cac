"""Claude Code, Anthropic's coding agent: it speaks the Messages API (`POST /v1/messages?beta=true`), is pointed at
a server with ANTHROPIC_BASE_URL, and run headless with `-p TASK --output-format stream-json --verbose`, which
writes one JSON event per line: `system` (init, api_retry…), `assistant` and `user` messages (tool calls and their
results), and a last `result`.

Its npm package's wrapper asks for Node 22 or later; the platform package's native binary runs without Node, and is
what lmconform starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmconform.agents.agent import LOCAL, Agent, Launch, ModelShape, text_of
from lmconform.agents.outcome import AgentOutcome, ToolRun
from lmconform.agents.relay import AGENT_KEY
from lmconform.agents.sandbox import Sandbox

# Claude Code's own switches (its settings documentation): no telemetry, error reports, update checks, surveys or
# any other traffic than the model's. It retries a failed request up to ten times with a growing pause; two show
# a server that fails every request in seconds, with Claude Code's own error, rather than after minutes.
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_MAX_RETRIES": "2",
}


class ClaudeCode(Agent):
    name = "claude-code"
    title = "Claude Code"
    package = "@anthropic-ai/claude-code"
    api = "messages"
    client = "claude-cli"
    measured = "2.1.332"
    download_mb = 190
    # Given a `claude-*` id, Claude Code sends neither its environment as a system turn among the messages nor
    # `output_config`, and asks for thinking with a budget rather than `adaptive`: what it sends a local model differs.
    model_shapes = (LOCAL, ModelShape("claude", "claude-sonnet-4-5", "a `claude-*` id"))

    def binaries(self, os_name: str, arch: str) -> tuple[str, ...]:
        folder = f"@anthropic-ai/claude-code-{os_name}-{arch}"
        return (f"{folder}/claude", f"{folder}-musl/claude")

    def launch(self, binary: Path, sandbox: Sandbox, base_url: str, model: str | None, task: str) -> Launch:
        models = {name: model for name in ("ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
                                           "ANTHROPIC_DEFAULT_HAIKU_MODEL")} if model else {}
        environment = sandbox.environment(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=AGENT_KEY,
                                          CLAUDE_CONFIG_DIR=str(sandbox.home / ".claude"), **QUIET, **models)
        argv = (str(binary), "-p", task, "--output-format", "stream-json", "--verbose",
                *(("--model", model) if model else ()))
        return Launch(argv, environment)

    def outcome(self, events: list[Any]) -> AgentOutcome:
        calls: dict[str, tuple[str, Any]] = {}
        runs: list[ToolRun] = []
        texts: list[str] = []
        errors: list[str] = []
        retries: list[str] = []
        final: str | None = None
        for event in events:
            if not isinstance(event, dict):
                continue
            kind, message = event.get("type"), event.get("message")
            blocks = message.get("content") if isinstance(message, dict) else None
            blocks = [block for block in blocks if isinstance(block, dict)] if isinstance(blocks, list) else []
            if kind == "assistant" and (event.get("is_api_error_message") or event.get("error")):
                errors.append(text_of(blocks) or str(event.get("error")))
            elif kind == "assistant":
                for block in blocks:
                    if block.get("type") == "tool_use":
                        calls[str(block.get("id"))] = (str(block.get("name")), block.get("input"))
                    elif block.get("type") == "text" and block.get("text"):
                        texts.append(block["text"])
            elif kind == "user":
                for block in blocks:
                    if block.get("type") == "tool_result" and str(block.get("tool_use_id")) in calls:
                        name, arguments = calls.pop(str(block.get("tool_use_id")))
                        runs.append(ToolRun(name, arguments, text_of(block.get("content")),
                                            block.get("is_error") is True))
            elif kind == "system" and event.get("subtype") == "api_retry":
                why = event.get("error_status") or event.get("error") or "unknown"
                retries.append(f"attempt {event.get('attempt')} of {event.get('max_retries')}: {why}")
            elif kind == "result":
                said = event.get("result") if isinstance(event.get("result"), str) else None
                if event.get("is_error") is True:
                    if said and said not in errors:
                        errors.append(said)
                    elif not said:
                        errors.append(f"the run ended with {event.get('subtype') or 'an error'}")
                else:
                    final = said
        runs += [ToolRun(name, arguments, "", True) for name, arguments in calls.values()]  # never answered
        return AgentOutcome(final if final is not None else (texts[-1] if texts else None), tuple(runs),
                            tuple(errors), tuple(retries))
