"""What lmconform knows of one coding agent, its profile: which npm package it comes in (and so its exact version),
where that package keeps its native binary for this machine, how it is pointed at a base URL and a model inside a
sandbox, and how its machine-readable output reads as an AgentOutcome. A profile was measured on one version of the
agent (`measured`); lmconform runs any other version with it, and says so where that is a prediction."""

from __future__ import annotations

import json
import platform
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmconform.agents.outcome import AgentOutcome
from lmconform.agents.sandbox import Sandbox
from lmconform.reference.wire import DEFAULT_MODEL

_ARCHES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def machine() -> tuple[str, str]:
    """(os, arch) as npm's platform packages name them: `("linux", "x64")`."""
    return sys.platform, _ARCHES.get(platform.machine().lower(), platform.machine().lower())


def cpu_has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return True  # not Linux: the platform package has no baseline build to fall back to


@dataclass(frozen=True)
class ModelShape:
    """A kind of model id an agent may be given: what some agents send depends on it."""

    name: str  # `local`, `claude`: in recorded cases' provenance and names
    model: str  # the id given
    meaning: str  # `a local model's id`


LOCAL = ModelShape("local", DEFAULT_MODEL, "a local model's id")


@dataclass(frozen=True)
class Launch:
    """How the agent is started for one run: its command line and its whole environment."""

    argv: tuple[str, ...]
    environment: dict[str, str]


class Agent(ABC):
    name: str  # lmconform's name for it: `claude-code`
    title: str  # its users' name for it: `Claude Code`
    package: str  # the npm package whose version the verdicts name
    api: str  # the API it speaks (lmconform.api_table)
    client: str  # the product its user agent names, as recorded cases name their client: `claude-cli`
    measured: str  # the version this profile was measured on: its switches, how its output reads, its size, its races
    download_mb: int  # what npm downloads for it on Linux x64, at the measured version
    model_shapes: tuple[ModelShape, ...] = (LOCAL,)  # the model ids its requests are recorded with

    # How its fault × agent matrix runs it, where that is not as a user gets it by default (docs/agents.md), in words
    # that follow "Measured": the matrix measures what defects do to an agent that gets past its first request.
    measured_as: str = ""

    def as_measured(self) -> Agent:
        """The agent as its fault × agent matrix runs it."""
        return self

    def over_websocket(self) -> Agent | None:
        """The agent set to speak its API over a WebSocket (the Responses API's WebSocket mode), where it has such
        a mode: the defects of that mode reach it only so."""
        return None

    @abstractmethod
    def binaries(self, os_name: str, arch: str) -> tuple[str, ...]:
        """Where its platform package keeps the native binary, under node_modules, best first."""

    @abstractmethod
    def launch(self, binary: Path, sandbox: Sandbox, base_url: str, model: str | None, task: str) -> Launch:
        """Its configuration written into the sandbox, and how it is started to do `task` against `base_url`."""

    @abstractmethod
    def outcome(self, events: list[Any]) -> AgentOutcome:
        """What it showed its user, from the JSON events it wrote on stdout."""

    def binary(self, node_modules: Path) -> Path | None:
        for relative in self.binaries(*machine()):
            for found in sorted(node_modules.glob(relative)):
                if found.is_file():
                    return found
        return None

    def model_shape(self, name: str | None) -> ModelShape:
        """The shape of model id called `name`; its first (the target's own id) for None."""
        if name is None:
            return self.model_shapes[0]
        found = next((shape for shape in self.model_shapes if shape.name == name), None)
        if found is None:
            raise ValueError(f"{self.title} has no model id shape {name!r}: its shapes are "
                             f"{', '.join(shape.name for shape in self.model_shapes)}")
        return found

    def prediction(self, version: str) -> str:
        """What lmconform says of a run of `version` that its profile was not measured on ("" when it was)."""
        if not version or version == self.measured:
            return ""
        return (f"lmconform's profile of {self.title} was measured on {self.measured}: {version} is run and read as "
                f"{self.measured} was, a prediction until it is measured")

    def version(self, node_modules: Path) -> str | None:
        try:
            return json.loads((node_modules / self.package / "package.json").read_text())["version"]
        except (OSError, ValueError, KeyError, TypeError):
            return None


def text_of(content: Any) -> str:
    """The text of an event's content: a string, or the text of its text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(part.get("text") if isinstance(part, dict) else part) for part in content)
    return ""
