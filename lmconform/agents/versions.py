"""An agent at any version: `--agents claude-code@2.1.340,codex@latest,opencode` (the pytest plugin, `lmconform
check`, the action) and the `lmconform agents` commands name an agent alone (its pinned version) or with a version or
an npm dist-tag after `@`. A tag is resolved to the exact version it names when the run starts, and a version other
than the pin is installed into the cache on first use (lmconform.agents.install), so that every verdict, report and
record names the version that ran."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent
from lmconform.agents.install import (
    NPM,
    InstallError,
    Packages,
    install,
    install_dir,
    install_version,
    pinned_version,
    version_dir,
)

EXACT = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")  # 2.1.340, 0.172.0-alpha.3
TAG = re.compile(r"^[A-Za-z][0-9A-Za-z.-]*$")  # latest, next, beta
FORMS = "NAME or NAME@VERSION, such as claude-code@2.1.340 or codex@latest"


@dataclass(frozen=True)
class AgentAt:
    """An agent as asked for: at its pin (`wanted` empty), an exact version, or a dist-tag."""

    agent: Agent
    wanted: str = ""

    def __str__(self) -> str:
        return f"{self.agent.name}@{self.wanted}" if self.wanted else self.agent.name


def parse_agent(text: str, agents: dict[str, Agent] = AGENTS) -> AgentAt:
    """`claude-code`, `claude-code@2.1.340` or `codex@latest`; ValueError with a sentence otherwise."""
    name, at, wanted = text.strip().partition("@")
    if name not in agents:
        raise ValueError(f"no agent {name!r}")
    if at and not (EXACT.match(wanted) or TAG.match(wanted)):
        raise ValueError(f"{text.strip()!r} names no version: after @ comes an exact version (2.1.340) or an npm "
                         "dist-tag (latest)")
    return AgentAt(agents[name], wanted)


def parse_agents(text: str) -> tuple[AgentAt, ...]:
    """The value of --agents: `all`, or agents separated by commas, each once."""
    words = [word.strip() for word in text.split(",") if word.strip()]
    if words == ["all"]:
        return tuple(AgentAt(agent) for agent in AGENTS.values())
    try:
        chosen = [parse_agent(word) for word in words]
    except ValueError as error:
        raise ValueError(f"--agents takes agents among {', '.join(AGENTS)} (comma-separated, each {FORMS}) or all, "
                         f"not {text!r}: {error}") from None
    if not chosen:
        raise ValueError(f"--agents takes agents among {', '.join(AGENTS)} (comma-separated) or all, not {text!r}")
    named = [at.agent.name for at in chosen]
    twice = sorted({name for name in named if named.count(name) > 1})
    if twice:
        raise ValueError(f"--agents names {', '.join(twice)} twice: a run runs one version of each agent")
    return tuple(chosen)


def resolve(at: AgentAt, packages: Packages = NPM) -> str:
    """The exact version `at` names: its pin, the version itself, or what its tag names now (InstallError)."""
    if not at.wanted:
        if not pinned_version(at.agent):
            raise InstallError(f"{at.agent.title} has no pinned version: name one, as {at.agent.name}@VERSION")
        return pinned_version(at.agent)
    return at.wanted if EXACT.match(at.wanted) else packages.resolve(at.agent.package, at.wanted)


def default_node_modules() -> Path:
    """Where the pinned agents are installed (or are to be)."""
    return install_dir(tuple(AGENTS.values())) / "node_modules"


def node_modules(agent: Agent, version: str | None = None) -> Path:
    """Where `agent` at `version` is installed (or is to be): the pinned set's folder for its pin (or None)."""
    if not version or version == pinned_version(agent):
        return default_node_modules()
    return version_dir(agent, version) / "node_modules"


def prepare(agent: Agent, version: str, packages: Packages = NPM,
            say: Callable[[str], None] | None = None) -> Path:
    """`agent` at exactly `version`, installed first if it is not: its node_modules (InstallError)."""
    extra = {"say": say} if say else {}
    if version == pinned_version(agent) and packages is NPM:
        return install(tuple(AGENTS.values()), **extra)
    return install_version(agent, version, packages, **extra)


def chosen_agents(text: str, say: Callable[[str], None] | None = None) -> tuple[str, dict[str, str]]:
    """--agents as a run takes it: the same list with each tag replaced by the exact version it names (what the
    run's other processes are given, so that they run that very version), and the exact version of each agent run at
    another version than its pin, installed first if it is not. ValueError for a bad list, InstallError for a
    version that cannot be found or installed."""
    chosen, exact, versions = parse_agents(text), [], {}
    for at in chosen:
        try:
            version = resolve(at)
            if version != pinned_version(at.agent):
                prepare(at.agent, version, say=say)
                versions[at.agent.name] = version
        except InstallError as error:
            raise InstallError(f"{at}: {error}") from None
        exact.append(f"{at.agent.name}@{version}" if at.wanted else at.agent.name)
    return ",".join(exact), versions
