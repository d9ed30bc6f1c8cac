"""The suite's command-line options, and the target (and upstream) and the run's settings they describe: a bad value
is a usage error (exit status 2) with a sentence naming the option, never a traceback."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import replace
from typing import Any, NoReturn

import pytest

from lmconform.agents import AGENTS
from lmconform.agents.install import InstallError, not_runnable
from lmconform.agents.versions import FORMS, chosen_agents, node_modules, parse_agent
from lmconform.command_line import WAIT, number_within
from lmconform.exit_status import USAGE_ERROR
from lmconform.fuzz.chains import PROGRAM_COST
from lmconform.profiles import parse_profile
from lmconform.settings import (
    DEFAULT_AGENT_REQUESTS,
    DEFAULT_AGENT_SECONDS,
    DEFAULT_FUZZ_EXAMPLES,
    DEFAULT_FUZZ_SHRINK,
    FUZZ_MODES,
    RunSettings,
)
from lmconform.target import (
    BRIDGE_PROFILES,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_READ_TIMEOUT_S,
    DEFAULT_STREAM_IDLE_LIMIT_S,
    Target,
    normalize_base_url,
    parse_command,
    shown_command,
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("lmconform", "lmconform: conformance of an OpenAI-compatible endpoint")
    group.addoption("--endpoint", help="base URL of the target, with or without /v1 (default: the embedded reference server)")
    group.addoption("--upstream", metavar="URL",
                    help="differential mode: also send every case straight to this upstream and report what the "
                         "target (a proxy) changes")
    group.addoption("--upstream-api-key", help="API key of the upstream (default: $LMCONFORM_UPSTREAM_API_KEY)")
    group.addoption("--upstream-model", help="model id at the upstream (default: its first listed model)")
    group.addoption("--api-key", help="API key sent as a Bearer token (default: $LMCONFORM_API_KEY); shown as [Filtered]")
    group.addoption("--model", help="model id to request (default: the first id listed by GET /v1/models)")
    group.addoption("--max-tokens", metavar="N", help="output cap for requests that set none (real models)")
    group.addoption("--temperature", metavar="T", help="temperature for requests that set none (0: repeatable)")
    group.addoption("--target-name", help="label of the target in reports (default: the host, or 'reference')")
    group.addoption("--server-version", help="server version, for reports and snapshots (LM Studio publishes none)")
    group.addoption("--profile", metavar="lmstudio[@VERSION]|reference",
                    help="hold the target to this server family's documented behaviour: lmstudio (its latest "
                         "version) or lmstudio@0.3.17 (that version: a feature it documents as missing is "
                         "UNSUPPORTED, not FAILED), and its exact answers; the embedded reference server is "
                         "'reference'")
    # pytest-timeout owns --timeout when it is installed; ours is then only --read-timeout.
    names = ["--read-timeout"] if importlib.util.find_spec("pytest_timeout") else ["--read-timeout", "--timeout"]
    group.addoption(*names, dest="lmconform_read_timeout", default=str(DEFAULT_READ_TIMEOUT_S), metavar="SECONDS",
                    help=f"seconds to wait for the next bytes of an answer; a stalled stream ends its case with "
                         f"ERROR (default {DEFAULT_READ_TIMEOUT_S:g})")
    group.addoption("--stream-idle-limit", default=str(DEFAULT_STREAM_IDLE_LIMIT_S), metavar="SECONDS",
                    help="longest silence (no event) a Responses stream may hold before a client drops it and sends "
                         f"the request again (default {DEFAULT_STREAM_IDLE_LIMIT_S:g}: Codex CLI's "
                         "stream_idle_timeout_ms)")
    group.addoption("--max-body-bytes", default=str(DEFAULT_MAX_BODY_BYTES), metavar="N",
                    help=f"stop reading an answer after N bytes (default {DEFAULT_MAX_BODY_BYTES})")
    group.addoption("--repeat", default="1", metavar="K",
                    help="send each case K times and judge every answer: a check passes only if it held in all K "
                         "(pass^k, for real models whose answers vary)")
    group.addoption("--fuzz-examples", default=str(DEFAULT_FUZZ_EXAMPLES), metavar="N",
                    help=f"generated requests each generated case sends: valid and invalid requests of each API, "
                         f"previous_response_id programs (a program counts as {PROGRAM_COST} requests) "
                         f"(default {DEFAULT_FUZZ_EXAMPLES}; 0 turns generation off)")
    group.addoption("--fuzz-mode", default="both", metavar="|".join(FUZZ_MODES),
                    help="generate valid requests (positive: each must be answered 2xx and pass every check), "
                         "invalid ones (negative: each must get a 4xx with an error body), or both (default)")
    group.addoption("--fuzz-seed", metavar="S",
                    help="seed of the generated requests (default: derandomized, the same requests every run); "
                         "a finding names its seed, and the same seed replays the same requests")
    group.addoption("--fuzz-shrink", default=str(DEFAULT_FUZZ_SHRINK), metavar="N",
                    help=f"requests shrinking a finding of generated requests may send; past them the smallest found "
                         f"so far is reported (default {DEFAULT_FUZZ_SHRINK}; keep it small against a slow real model)")
    group.addoption("--fuzz-save", metavar="DIR",
                    help="write each shrunk finding of generated requests as a case file under DIR/<api>/ "
                         "(DIR/<api>/cases/ when DIR is lmconform/apis: the next run plays it as a regression case)")
    group.addoption("--upstream-fuzz", default="0", metavar="N",
                    help="with --upstream (lmconform's reference server): also send N generated answers per API, each "
                         "in a legal but unusual wire form, through the target and straight to the upstream; a "
                         "difference shrinks to the framing that causes it (default 0: none)")
    group.addoption("--upstream-fuzz-seed", default="0", metavar="S",
                    help="the seed that draws the --upstream-fuzz answers (default 0)")
    group.addoption("--cases", action="append", default=[], metavar="GLOB",
                    help="play only cases whose id (chat/void-weather-tool) or name (void-weather-tool) matches")
    group.addoption("--checks", action="append", default=[], metavar="GLOB", help="run only checks whose id matches")
    group.addoption("--exclude-checks", action="append", default=[], metavar="GLOB", help="skip checks whose id matches")
    group.addoption("--expect", metavar="FILE",
                    help="known failures of this target (TOML, as in fixtures/targets/): they are reported as "
                         "expected, and one that no longer fails fails the run")
    group.addoption("--results-json", metavar="PATH",
                    help="write the results record (one row per case and check, and the exchanges behind findings); "
                         "gzip-compressed when PATH ends in .gz")
    group.addoption("--report", metavar="PATH",
                    help="write the run's HTML report, built from its results record as `lmconform report` builds it")
    group.addoption("--reference-fault", action="append", default=[], metavar="NAME",
                    help="serve this fault from the embedded reference server (see `lmconform faults`)")
    group.addoption("--bridge-command", metavar='"CMD ARGS"',
                    help="a VS Code language-model bridge to test: the command line that starts it, spoken to in "
                         "JSON-RPC on its stdin and stdout, one process per case (with --endpoint: both are tested)")
    group.addoption("--bridge-profile", metavar="|".join(BRIDGE_PROFILES), default="strict",
                    help="what the bridge does with a cancelled request: strict, one lm/responseComplete and the "
                         "result; symposium, neither, as Symposium's bridge does (default strict)")
    group.addoption("--agents", metavar="claude-code,codex,opencode|all",
                    help="also run these coding agents against the target, each on a small task through lmconform's "
                         "relay (`lmconform agents install` installs them): each request they send is judged like "
                         f"any case, and the agent checks judge what the agent showed its user (default: none). Each "
                         f"is {FORMS}: a version other than the pinned one is installed on first use")
    group.addoption("--agent-timeout", default=str(DEFAULT_AGENT_SECONDS), metavar="SECONDS",
                    help=f"wall-clock limit of an agent's run; an agent still running is stopped, and its checks are "
                         f"ERROR with its last output (default {DEFAULT_AGENT_SECONDS:g})")
    group.addoption("--agent-requests", default=str(DEFAULT_AGENT_REQUESTS), metavar="N",
                    help=f"requests an agent's run may send; one more ends it as a loop (default "
                         f"{DEFAULT_AGENT_REQUESTS})")
    group.addoption("--bridge-fault", action="append", default=[], metavar="NAME",
                    help="reproduce this defect in the embedded reference bridge (see `lmconform bridge "
                         "--list-faults`)")


def usage_error(message: str) -> NoReturn:
    pytest.exit(f"lmconform: {message}", returncode=USAGE_ERROR)


def _fuzz_mode(config: pytest.Config) -> str:
    mode = config.getoption("fuzz_mode")
    if mode not in FUZZ_MODES:
        usage_error(f"--fuzz-mode takes one of {', '.join(FUZZ_MODES)}, not {mode!r}")
    return mode


def _number(config: pytest.Config, option: str, flag: str, kind: type[int] | type[float], low: float,
            high: float = sys.maxsize, above: bool = False) -> Any:
    """The option's number (lmconform.command_line.number_within), or a usage error naming it."""
    raw = config.getoption(option)
    try:
        return number_within(raw, kind, low, high, above)
    except ValueError as error:
        usage_error(f"{flag} {error}")


def _agents(config: pytest.Config) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The agents' names, and the exact version of each run at another version than its pin (installed now)."""
    text = config.getoption("agents")
    if not text:
        return (), ()
    try:
        exact, versions = chosen_agents(text)
    except (ValueError, InstallError) as error:
        usage_error(str(error))
    # pytest-xdist hands this process's options to its workers: they run the versions resolved here.
    config.option.agents = exact
    return tuple(parse_agent(word).agent.name for word in exact.split(",")), tuple(versions.items())


def _runnable(settings: RunSettings) -> None:
    """Every agent asked for can be run here: one that cannot (not installed, no binary for this machine) is a usage
    error saying how to install it, never a run that passes without it."""
    versions = dict(settings.agent_versions)
    why = not_runnable((AGENTS[name], node_modules(AGENTS[name], versions.get(name))) for name in settings.agents)
    if why:
        usage_error(why)


def upstream_from_options(config: pytest.Config, target: Target, settings: RunSettings) -> Target | None:
    url = config.getoption("upstream")
    if not url:
        if settings.stream_examples:
            usage_error("--upstream-fuzz sends answers through the target and straight to an upstream: add --upstream "
                         "URL (lmconform serve)")
        return None
    try:
        base_url = normalize_base_url(url)
    except ValueError as error:
        usage_error(str(error).replace("--endpoint", "--upstream"))
    key = config.getoption("upstream_api_key") or os.environ.get("LMCONFORM_UPSTREAM_API_KEY") or None
    return replace(target, base_url=base_url, api_key=key, model=config.getoption("upstream_model"),
                   label=f"upstream {base_url.split('://', 1)[-1]}", profile=None)


def target_from_options(config: pytest.Config) -> Target:
    endpoint = config.getoption("endpoint")
    base_url = ""
    if endpoint:
        try:
            base_url = normalize_base_url(endpoint)
        except ValueError as error:
            usage_error(str(error))
    if endpoint and config.getoption("reference_fault"):
        usage_error("--reference-fault applies to the embedded reference server; drop it or drop --endpoint")
    if config.getoption("reference_fault"):
        from lmconform.reference.faults import parse_faults

        try:
            parse_faults(config.getoption("reference_fault"))
        except ValueError as error:
            usage_error(str(error))
    try:
        parse_profile(config.getoption("profile"))
    except ValueError as error:
        usage_error(str(error))
    command = _bridge_command(config, bool(endpoint))
    api_key = config.getoption("api_key") or os.environ.get("LMCONFORM_API_KEY") or None
    label = config.getoption("target_name") or (base_url.split("://", 1)[-1] if base_url else
                                                 shown_command(command, (api_key,) if api_key else ()) if command
                                                 else "reference")
    return Target(
        base_url=base_url,
        api_key=api_key,
        model=config.getoption("model"),
        label=label,
        server_version=config.getoption("server_version"),
        profile=config.getoption("profile") or (None if base_url or command else "reference"),
        read_timeout=_number(config, "lmconform_read_timeout", "--read-timeout", *WAIT),
        max_body_bytes=_number(config, "max_body_bytes", "--max-body-bytes", int, 1),
        stream_idle_limit_s=_number(config, "stream_idle_limit", "--stream-idle-limit", *WAIT),
        bridge_command=command,
        bridge_profile=config.getoption("bridge_profile"),
    )


def settings_from_options(config: pytest.Config) -> RunSettings:
    agents, agent_versions = _agents(config)
    settings = RunSettings(
        max_tokens=_number(config, "max_tokens", "--max-tokens", int, 1) if config.getoption("max_tokens") else None,
        temperature=(_number(config, "temperature", "--temperature", float, 0, 2)
                     if config.getoption("temperature") is not None else None),
        repeat=_number(config, "repeat", "--repeat", int, 1),
        fuzz_examples=_number(config, "fuzz_examples", "--fuzz-examples", int, 0),
        fuzz_mode=_fuzz_mode(config),
        fuzz_seed=(_number(config, "fuzz_seed", "--fuzz-seed", int, 0)
                   if config.getoption("fuzz_seed") is not None else None),
        fuzz_save=config.getoption("fuzz_save"),
        fuzz_shrink=_number(config, "fuzz_shrink", "--fuzz-shrink", int, 0),
        stream_examples=_number(config, "upstream_fuzz", "--upstream-fuzz", int, 0),
        stream_seed=_number(config, "upstream_fuzz_seed", "--upstream-fuzz-seed", int, 0),
        agents=agents,
        agent_versions=agent_versions,
        agent_seconds=_number(config, "agent_timeout", "--agent-timeout", *WAIT),
        agent_requests=_number(config, "agent_requests", "--agent-requests", int, 1),
    )
    _runnable(settings)  # last: a mistake in the options is said first, before what is not installed
    return settings


def _bridge_command(config: pytest.Config, endpoint: bool) -> tuple[str, ...]:
    """The bridge to test; a reference server's or bridge's fault needs the embedded one."""
    text = config.getoption("bridge_command")
    if config.getoption("bridge_profile") not in BRIDGE_PROFILES:
        usage_error(f"--bridge-profile takes one of {', '.join(BRIDGE_PROFILES)}, "
                    f"not {config.getoption('bridge_profile')!r}")
    if config.getoption("bridge_fault"):
        if text or endpoint:
            usage_error("--bridge-fault applies to the embedded reference bridge; drop it, or drop --bridge-command "
                        "and --endpoint")
        from lmconform.bridge import parse_faults

        try:
            parse_faults(config.getoption("bridge_fault"))
        except ValueError as error:
            usage_error(str(error))
    if text is None:
        return ()
    if config.getoption("reference_fault"):
        usage_error("--reference-fault applies to the embedded reference server; drop it or drop --bridge-command")
    try:
        return parse_command(text)
    except ValueError as error:
        usage_error(str(error))
