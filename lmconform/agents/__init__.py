"""Real coding agents in the loop: Claude Code (Anthropic Messages), Codex CLI (Responses) and opencode (chat
completions), each pinned to an exact version (package.json and package-lock.json beside this module), installed
by npm into the user's cache (lmconform.agents.install), and run on a task in a sandbox of its own
(lmconform.agents.sandbox) against a relay that sends its requests on to the target through lmconform's capture
(lmconform.agents.relay). What it showed its user is read from its own machine-readable output into an
AgentOutcome; lmconform.agents.runner does one run; lmconform.fuzz.agents makes the runs a source of cases.
"""

from lmconform.agents.agent import Agent
from lmconform.agents.claude_code import ClaudeCode
from lmconform.agents.codex import Codex
from lmconform.agents.opencode import Opencode

AGENTS: dict[str, Agent] = {agent.name: agent for agent in (ClaudeCode(), Codex(), Opencode())}
