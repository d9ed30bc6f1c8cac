"""A real target's expected verdicts (fixtures/targets/*.toml): how to run the suite against it, and every
(case, check) that does not come out OK, in the `--expect` format.

    label = "llama-cpp-python"
    start = "python -m llama_cpp.server --model gemma-3-270m-q4_k_m.gguf --chat_format chatml-function-calling"
    [run]
    model = "gemma-3-270m-q4_k_m"
    max_tokens = 64
    temperature = 0
    apis = ["chat", "models", "responses"]
    exclude = ["…"]          # or checks = ["…"]: globs over check ids
    fuzz_examples = 0        # generated requests per generated case (0: none)
    fuzz_sources = ["chains"] # which sources of generated cases play (default: all)
    fuzz_shrink = 20         # requests shrinking a finding may send (default DEFAULT_FUZZ_SHRINK)
    exclude_cases = ["…"]    # globs over case ids the run leaves out
    agents = ["claude-code"] # coding agents run against the target on their task (lmconform.agents; --agents)
    agent_timeout = 45       # seconds an agent's run may take (--agent-timeout; default DEFAULT_AGENT_SECONDS)
    read_timeout = 60        # seconds without a byte before an exchange is given up (--read-timeout; default
                             # DEFAULT_READ_TIMEOUT_S)
    upstream = true          # a proxy: also compare each answer with its upstream's (the proxy.diff checks)
    bridge = true            # the target is lmconform's reference VS Code bridge in front of the server (apis:
                             # ["vscodelm"]), started with the model, max_tokens and temperature above
    [[expected]]
    check = "client.void.tool_call_parsed"
    …                        # a wire fact: one outcome; or model_dependent = true with its outcomes (expectations.py)

`differences` compares a run with the file both ways: a verdict the file does not expect, an entry whose
(case, check) came out otherwise (OK included), an entry that matched nothing.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from lmconform.agents import AGENTS
from lmconform.api_table import APIS
from lmconform.checks.evaluate import Verdict
from lmconform.checks.registry import unmatched_patterns
from lmconform.expectations import ExpectationError, Expectations, load_expectations
from lmconform.run import Run, run_suite
from lmconform.settings import DEFAULT_AGENT_SECONDS, DEFAULT_FUZZ_EXAMPLES, RunSettings
from lmconform.target import DEFAULT_READ_TIMEOUT_S, Target
from lmconform.vocabulary import Outcome
from tools.targets.process import RunningTarget

RUN_KEYS = {"model", "max_tokens", "temperature", "apis", "checks", "exclude", "fuzz_examples", "fuzz_sources",
            "fuzz_shrink", "upstream", "bridge", "exclude_cases", "agents", "agent_timeout",
            "read_timeout"}


@dataclass(frozen=True)
class TargetFile:
    path: Path
    label: str
    start: str
    model: str | None
    max_tokens: int | None
    temperature: float | None
    apis: tuple[str, ...]
    checks: tuple[str, ...]
    exclude: tuple[str, ...]
    fuzz_examples: int
    fuzz_sources: tuple[str, ...]
    fuzz_shrink: int
    upstream: bool
    expectations: Expectations
    bridge: bool = False
    exclude_cases: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    agent_timeout: float = DEFAULT_AGENT_SECONDS
    read_timeout: float = DEFAULT_READ_TIMEOUT_S

    def target(self, base_url: str, api_key: str | None = None, server_version: str | None = None,
               label: str | None = None) -> Target:
        """The target to run the suite against; also its upstream, which is asked the same requests. With
        `bridge`, the reference bridge in front of the server at `base_url`."""
        if self.bridge:
            return Target(base_url="", api_key=api_key, bridge_command=self.bridge_command(base_url, api_key),
                          label=self.label, server_version=server_version, read_timeout=self.read_timeout)
        return Target(base_url=base_url, api_key=api_key, model=self.model, label=label or self.label,
                      server_version=server_version, read_timeout=self.read_timeout)

    @property
    def settings(self) -> RunSettings:
        """The run's settings: a bridge has its output cap and temperature on its own command line."""
        if self.bridge:
            return RunSettings()
        return RunSettings(max_tokens=self.max_tokens, temperature=self.temperature, fuzz_examples=self.fuzz_examples,
                           fuzz_sources=self.fuzz_sources, fuzz_shrink=self.fuzz_shrink, agents=self.agents,
                           agent_seconds=self.agent_timeout)


    def bridge_command(self, base_url: str, api_key: str | None = None) -> tuple[str, ...]:
        options = [("--endpoint", base_url), ("--model", self.model), ("--api-key", api_key),
                   ("--max-tokens", self.max_tokens), ("--temperature", self.temperature)]
        return (sys.executable, "-m", "lmconform.bridge",
                *(word for option, value in options if value is not None for word in (option, str(value))))


def load_target_file(path: Path) -> TargetFile:
    expectations = load_expectations(path)
    data = tomllib.loads(path.read_text())
    for key in ("label", "start"):
        if not isinstance(data.get(key), str):
            raise ExpectationError(f"{path}: {key} (a string) is missing")
    run = data.get("run", {})
    unknown = set(run) - RUN_KEYS
    if unknown:
        raise ExpectationError(f"{path}: [run] has unknown keys {', '.join(sorted(unknown))}")
    apis = tuple(run.get("apis", APIS))
    if not set(apis) <= set(APIS):
        raise ExpectationError(f"{path}: [run] apis must be among {', '.join(APIS)}")
    if run.get("bridge", False) and (apis != ("vscodelm",) or run.get("upstream", False)):
        raise ExpectationError(f"{path}: a bridge runs apis = [\"vscodelm\"] and has no upstream")
    checks, exclude = tuple(run.get("checks", ())), tuple(run.get("exclude", ()))
    if not set(run.get("agents", ())) <= set(AGENTS):
        raise ExpectationError(f"{path}: [run] agents must be among {', '.join(AGENTS)}")
    typos = list(unmatched_patterns(checks + exclude))
    if typos:
        raise ExpectationError(f"{path}: [run] globs match no check: {', '.join(typos)}")
    return TargetFile(path=path, label=data["label"], start=data["start"], model=run.get("model"),
                      max_tokens=run.get("max_tokens"), temperature=run.get("temperature"), apis=apis,
                      checks=checks, exclude=exclude, fuzz_examples=run.get("fuzz_examples", DEFAULT_FUZZ_EXAMPLES),
                      fuzz_sources=tuple(run.get("fuzz_sources", RunSettings.fuzz_sources)),
                      fuzz_shrink=run.get("fuzz_shrink", RunSettings.fuzz_shrink),
                      upstream=run.get("upstream", False), expectations=expectations, bridge=run.get("bridge", False),
                      exclude_cases=tuple(run.get("exclude_cases", ())), agents=tuple(run.get("agents", ())),
                      agent_timeout=_seconds(path, run, "agent_timeout", DEFAULT_AGENT_SECONDS),
                      read_timeout=_seconds(path, run, "read_timeout", DEFAULT_READ_TIMEOUT_S))


def _seconds(path: Path, run: dict, key: str, default: float) -> float:
    value = run.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ExpectationError(f"{path}: [run] {key} is a number of seconds above 0, not {value!r}")
    return value


def run_target_file(spec: TargetFile, running: RunningTarget, upstream_url: str | None = None) -> Run:
    """The suite against a running target with the file's options; a proxy's upstream is asked the same requests.
    The target's fingerprint carries how the server was built and run (its CPU code, its threads)."""
    if spec.upstream != (upstream_url is not None):
        raise ValueError(f"{spec.path}: upstream = {str(spec.upstream).lower()}, "
                         f"but {'no' if upstream_url is None else 'an'} upstream URL was given")
    upstream = spec.target(upstream_url, label=f"{spec.label} upstream") if upstream_url else None
    target = spec.target(running.base_url, running.api_key, running.server_version,
                         None if spec.bridge else running.label)
    if running.build:
        target = replace(target, fingerprint={"build": running.build})  # kept beside what the run's probes find
    return run_suite(target, spec.apis, spec.checks, spec.exclude, spec.expectations, upstream, settings=spec.settings,
                     exclude_cases=spec.exclude_cases)


@dataclass(frozen=True)
class Difference:
    kind: str  # "unexpected FAILED", "expected FAILED, got ERROR", "unexpected pass", "stale entry"
    case: str
    check: str
    detail: str  # the verdict's first lines, or the entry's reason


def _verdict_summary(verdict: Verdict) -> str:
    """The lines of a verdict that say what happened (not its level, curl or reference)."""
    lines = verdict.message.splitlines()
    keep = [line for line in lines[2:] if line.startswith(("Expected:", "Actual:", "Observed:", f"{verdict.outcome}:"))]
    return " | ".join(line.strip() for line in keep[:3])


def differences(verdicts: Iterable[Verdict], expectations: Expectations) -> list[Difference]:
    """Every way the run and the file disagree: a wire-fact row must come out as its one outcome, a model-dependent
    row within its set (or not at all), and every other (case, check) OK, or a known limit of the target's dialect
    (lmconform/verdicts/causes.toml)."""
    found: list[Difference] = []
    used = set()
    for verdict in verdicts:
        entry = expectations.for_pair(verdict.case_id, verdict.check.id)
        if entry is not None:
            used.add(entry)
        if entry is None:
            # A finding a known cause expects of the target's dialect is the package's to know, not the file's.
            if verdict.outcome is not Outcome.OK and not verdict.known_limit:
                found.append(Difference(f"unexpected {verdict.outcome}", verdict.case_id, verdict.check.id,
                                        _verdict_summary(verdict)))
        elif not entry.allows(verdict.outcome):
            kind = "unexpected pass" if verdict.outcome is Outcome.OK else f"expected {entry.shown}, got {verdict.outcome}"
            detail = f"expected {entry.shown}: {entry.reason}" if verdict.outcome is Outcome.OK \
                else _verdict_summary(verdict)
            found.append(Difference(kind, verdict.case_id, verdict.check.id, detail))
    for entry in expectations.entries:
        # A model-dependent row may match no verdict: the model may leave its check nothing to judge (an answer that
        # ends before the cap gives the check of a cut answer none), on this machine's CPU code and not another's.
        if entry not in used and not entry.model_dependent:
            found.append(Difference("stale entry", entry.case, entry.check, "matches no verdict of the run (or only "
                                    f"pairs an earlier entry names): {entry.reason}"))
    return found


def table(rows: list[Difference], width: int = 100) -> str:
    """The differences as aligned columns, the detail cut to `width` characters."""
    header = Difference("difference", "case", "check", "detail")
    kind_w = max(len(row.kind) for row in [header, *rows])
    case_w = max(len(row.case) for row in [header, *rows])
    check_w = max(len(row.check) for row in [header, *rows])
    lines = [f"{row.kind:<{kind_w}}  {row.case:<{case_w}}  {row.check:<{check_w}}  {row.detail[:width]}"
             for row in [header, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
