"""What one run of a coding agent leaves behind, in one vocabulary for every agent: what it showed its user (read
from its own machine-readable output), the exchanges lmconform relayed for it, and how the run ended."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HOP_HEADERS, HttpExchange
from lmconform.wire.redact import SECRET_HEADERS

# How a run ends: the agent exited by itself; it was stopped at the run's wall-clock limit, or when it asked for more
# requests than the run allows (a loop), or when it wrote more output than a run keeps.
EXITED, TIME_LIMIT, REQUEST_LIMIT, OUTPUT_LIMIT = "exited", "time-limit", "request-limit", "output-limit"
LAST_OUTPUT_LINES = 8


@dataclass(frozen=True)
class ToolRun:
    """A tool the agent ran: the name and arguments as it read them from the answer, and what the tool gave back."""

    name: str
    arguments: Any
    result: str = ""
    failed: bool = False  # the agent reported the tool's run as an error

    def shown(self) -> str:
        return f"{self.name}({_compact(self.arguments)})"


@dataclass(frozen=True)
class AgentOutcome:
    """What the agent showed its user, in its own words."""

    final_text: str | None = None  # the answer it showed at the end
    tool_runs: tuple[ToolRun, ...] = ()
    errors: tuple[str, ...] = ()  # errors it showed
    retries: tuple[str, ...] = ()  # requests it said it sent again, and why
    # What it said that is no fault of the target (Codex's warning about a model name it has no metadata for).
    notices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Limits:
    seconds: float  # wall clock, from the agent's start to its end
    requests: int  # requests relayed; the next one ends the run as a loop


@dataclass
class AgentRun:
    """One run of one agent on one task, through lmconform's relay."""

    agent: str  # its name in lmconform: `claude-code`
    title: str  # as its users call it: `Claude Code`
    version: str
    task: str
    secret: str  # the word the task's file holds, which the answer must quote
    limits: Limits
    outcome: AgentOutcome = field(default_factory=AgentOutcome)
    exchanges: tuple[Exchange, ...] = ()  # HTTP exchanges, and a WebSocket's upgrade (lmconform.agents.relay)
    requests: int = 0  # requests the agent sent, the one past the limit included
    ended: str = EXITED
    exit_status: int | None = None
    exit_text: str = ""  # `exit status 1`, `killed by signal 9 (SIGKILL) after lmconform stopped it`
    stderr: str = ""
    last_output: str = ""  # its last lines on stdout and stderr, for a run stopped before it ended
    duration_s: float = 0.0
    unavailable: str | None = None  # why the agent could not be run at all: not installed, no binary for this OS
    sandbox: str = ""  # the run's folder, which what the agent said names
    prediction: str = ""  # for a version the agent's profile was not measured on, that what is read of it is predicted

    def shown(self, text: str) -> str:
        """`text` with the run's sandbox folder as `$SANDBOX`: a run reads the same in every report."""
        return text.replace(self.sandbox, "$SANDBOX") if self.sandbox else text

    def sent(self, base_url: str) -> tuple[tuple[str, str, Any, dict[str, str]], ...]:
        """The requests relayed to `base_url` (the target the run was given), as (method, path, body, headers) to
        send again: the agent's own headers (its `anthropic-beta` flags) without its credentials, which the capture
        kept redacted."""
        return tuple((exchange.request.method, exchange.request.url.removeprefix(base_url), exchange.request.body,
                      {name: value for name, value in exchange.request.headers.items()
                       if name.lower() not in SECRET_HEADERS | HOP_HEADERS})
                     for exchange in self.http_exchanges)

    @property
    def http_exchanges(self) -> tuple[HttpExchange, ...]:
        """The requests the agent sent over HTTP (not the WebSocket it opened, whose messages the relay does not
        read)."""
        return tuple(exchange for exchange in self.exchanges if isinstance(exchange, HttpExchange))

    @property
    def label(self) -> str:
        """The agent as a verdict names it: `Claude Code 2.1.332`."""
        return f"{self.title} {self.version}".strip()

    def stderr_tail(self, lines: int = LAST_OUTPUT_LINES) -> str:
        return "\n".join(self.stderr.strip().splitlines()[-lines:])


def _compact(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 200 else text[:199] + "…"
