"""`lmconform check [URL]`: the suite in one command, for people who do not write pytest. It surveys the target (what
answers there, which model to test), runs the conformance suites in this process with a progress line, prints what
failed and the "will it work?" headline, and leaves `report.html`, `results.json` and `junit.xml` in `--out`.

The suites run under pytest (`pytest.main` naming `lmconform.suites`, which wakes the plugin), not through the run
API alone: the JUnit file, the known-failures semantics (xfail, an unexpected pass), --strict, the results record and
the step summary are then exactly those of `pytest suites`, and the exit status is the suite's.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from lmconform.agents.install import user_cache_dir
from lmconform.api_table import APIS
from lmconform.check_command.findings import findings_text
from lmconform.check_command.progress import Progress, case_of
from lmconform.check_command.survey import Refused, missing_apis, offer_sentence, survey
from lmconform.command_line import WAIT, number_within
from lmconform.exit_status import USAGE_ERROR
from lmconform.target import (
    DEFAULT_READ_TIMEOUT_S,
    DEFAULT_STREAM_IDLE_LIMIT_S,
    Target,
    address_hint,
    normalize_base_url,
)
from lmconform.wire.redact import redact_text

FILES = ("report.html", "results.json", "junit.xml")
DEFAULT_OUT = "lmconform-report"
# pytest's own statuses a user of this command never needs to tell apart from the suite's usage error.
PYTEST_USAGE = (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="test a server (default: the embedded reference server) and say which clients will work",
        description="Surveys the server at URL, runs every conformance case against it with a progress line, prints "
                    "what failed and the \"will it work?\" headline, and writes report.html, results.json and "
                    "junit.xml into --out. Exit status: 0 no MUST failed (with --strict, no SHOULD either), 1 a "
                    "check failed, 2 a usage error, 3 the server could not be reached.")
    parser.add_argument("url", nargs="?", metavar="URL",
                        help="the server's base URL, with or without /v1 (default: the embedded reference server)")
    parser.add_argument("--api-key", help="API key sent as a Bearer token (default: $LMCONFORM_API_KEY)")
    parser.add_argument("--model", help="the model to test (default: one the server lists; a loaded one that can "
                                        "call tools where the server says which)")
    parser.add_argument("--checks", action="append", default=[], metavar="GLOB",
                        help="only checks whose id matches (repeatable): --checks 'chat.stream.*'")
    parser.add_argument("--strict", action="store_true", help="a broken SHOULD fails the run too")
    parser.add_argument("--repeat", default="1", metavar="K",
                        help="send each case K times; a check passes only if it held every time (real models)")
    parser.add_argument("--agents", metavar="claude-code,codex,opencode|all",
                        help="also run these coding agents against the server on a small task, through lmconform's "
                             "relay (`lmconform agents install` installs them once); claude-code@2.1.340 or "
                             "codex@latest runs that version, installed on first use")
    parser.add_argument("--expect", metavar="FILE",
                        help="known failures of this server (TOML): reported as expected, and one that no longer "
                             "fails fails the run")
    parser.add_argument("--upstream", metavar="URL2",
                        help="URL is a proxy in front of URL2: also send every case straight to URL2 and report "
                             "what the proxy changes (the proxy gate's short form)")
    parser.add_argument("--reference-fault", action="append", default=[], metavar="NAME",
                        help="without URL: the embedded reference server reproduces this defect (`lmconform faults`)")
    parser.add_argument("--read-timeout", metavar="SECONDS",
                        help="longest wait for the server's next bytes before a case is an ERROR (default "
                             f"{DEFAULT_READ_TIMEOUT_S:g}; a slow model on a CPU may need more)")
    parser.add_argument("--stream-idle-limit", metavar="SECONDS",
                        help="longest silence (no event) a Responses stream may hold before a client drops it and "
                             f"sends the request again (default {DEFAULT_STREAM_IDLE_LIMIT_S:g}, Codex CLI's; set it "
                             "to a provider's stream_idle_timeout_ms / 1000)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help=f"where report.html, results.json and junit.xml go (default ./{DEFAULT_OUT})")
    parser.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    api_key = args.api_key or os.environ.get("LMCONFORM_API_KEY") or None

    def say(message: str, stream=sys.stdout) -> None:
        print(redact_text(message, (api_key,) if api_key else ()), file=stream, flush=True)

    offered: set[str] = set()
    try:
        options = _suite_options(args, api_key, say, offered)
        out = _out_dir(args.out)
    except Refused as refusal:
        say(f"lmconform check: {refusal}", sys.stderr)
        return refusal.status
    progress = Progress(sys.stdout)
    # Hypothesis keeps its tables in the working directory unless told otherwise: in the user's cache, they leave
    # nothing in the user's directory nor in --out but the report files, and are computed once per machine.
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(user_cache_dir() / "hypothesis"))
    status = pytest.main(["--pyargs", "lmconform.suites", "-c", os.devnull, "--rootdir", str(out),
                          "-p", "no:cacheprovider", "-p", "no:terminal", *options,
                          "--results-json", str(out / "results.json"), "--report", str(out / "report.html"),
                          "--junitxml", str(out / "junit.xml")], plugins=[progress, OfferedOnly(offered)])
    progress.finish()
    if progress.not_loaded:
        say(f"lmconform check: the suites could not be loaded: {progress.not_loaded}", sys.stderr)
        return USAGE_ERROR
    status = USAGE_ERROR if status in PYTEST_USAGE else int(status)
    record = out / "results.json"
    if status in (0, 1) and record.exists():
        print(findings_text(record))
        say(f"Wrote {', '.join(str(out / name) for name in FILES)}")
    return status


class OfferedOnly:
    """A pytest plugin: leaves out the cases of the APIs the server does not offer (none, when `apis` is empty)."""

    def __init__(self, apis: set[str]) -> None:
        self.apis = apis

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not self.apis:
            return
        left_out = [item for item in items if getattr(case_of(item), "api", None) not in (None, *self.apis)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if item not in left_out]


def _out_dir(text: str) -> Path:
    out = Path(text)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise Refused(f"cannot write into --out {text}: {error.strerror or error}", USAGE_ERROR) from None
    return out


def _suite_options(args: argparse.Namespace, api_key: str | None, say, offered: set[str]) -> list[str]:
    """The suite's options for what the command was given, each checked first so that a mistake is one line; the
    APIs the server offers go into `offered` (left empty: every API)."""
    from lmconform.checks.registry import unmatched_patterns

    unknown = list(unmatched_patterns(args.checks))
    if unknown:
        raise Refused(f"no check id matches {', '.join(map(repr, unknown))}: `lmconform checks` lists them",
                      USAGE_ERROR)
    from lmconform.agents.install import InstallError, not_runnable
    from lmconform.agents.versions import chosen_agents, node_modules, parse_agent

    agents = None  # each tag resolved, each version other than the pin installed: what the suite is given
    if args.agents is not None:
        try:
            agents, _ = chosen_agents(args.agents, lambda line: say(f"lmconform check: {line}", sys.stderr))
        except (ValueError, InstallError) as error:
            raise Refused(str(error), USAGE_ERROR) from None
    if agents:  # a gate that asks for an agent must not pass without running it
        chosen = [parse_agent(word) for word in agents.split(",")]
        not_installed = not_runnable((at.agent, node_modules(at.agent, at.wanted or None)) for at in chosen)
        if not_installed:
            raise Refused(not_installed, USAGE_ERROR)
    repeat = _number("--repeat", args.repeat, int, 1)
    read_timeout = None if args.read_timeout is None else _number("--read-timeout", args.read_timeout, *WAIT)
    idle_limit = None if args.stream_idle_limit is None else _number("--stream-idle-limit", args.stream_idle_limit,
                                                                     *WAIT)
    if args.expect and not Path(args.expect).is_file():
        raise Refused(f"--expect {args.expect}: no such file", USAGE_ERROR)
    options = [*(word for glob in args.checks for word in ("--checks", glob)), "--repeat", str(repeat)]
    options += ["--expect", args.expect] if args.expect else []
    options += ["--agents", agents] if agents else []
    options += ["--strict"] if args.strict else []
    options += ["--api-key", api_key] if api_key else []
    options += ["--read-timeout", str(read_timeout)] if read_timeout else []
    options += ["--stream-idle-limit", str(idle_limit)] if idle_limit else []
    if args.url is None:
        return options + _embedded(args, say)
    if args.reference_fault:
        raise Refused("--reference-fault is a defect of the embedded reference server: drop it, or drop URL "
                      "(a running `lmconform serve` serves its faults under URL/faults/NAME)", USAGE_ERROR)
    base_url = _url(args.url, "URL")
    timeout = {"read_timeout": read_timeout} if read_timeout else {}
    found = survey(Target(base_url, api_key=api_key, model=args.model, **timeout))
    missing = missing_apis(Target(base_url, api_key=api_key, model=found.model, **timeout))
    offered.update(api for api in APIS if api not in missing)
    say(f"lmconform check: {base_url}\n{found.sentence}; {offer_sentence(missing)}")
    options += ["--endpoint", base_url, *(["--model", found.model] if found.model else []),
                *(["--profile", found.profile] if found.profile else [])]
    if args.upstream:
        upstream = _url(args.upstream, "--upstream")
        say(f"through the proxy at {base_url} and straight to {upstream}: "
            f"{survey(Target(upstream)).sentence}")
        options += ["--upstream", upstream]
    return options


def _number(option: str, text: str, kind: type[int] | type[float], low: float, high: float = sys.maxsize,
            above: bool = False) -> Any:
    """The option's number; checked here rather than by argparse, whose usage error is several lines."""
    try:
        return number_within(text, kind, low, high, above)
    except ValueError as error:
        raise Refused(f"{option} {error}", USAGE_ERROR) from None


def _embedded(args: argparse.Namespace, say) -> list[str]:
    from lmconform.reference.faults import parse_faults

    if args.upstream:
        raise Refused("--upstream names what the proxy at URL forwards to: give the proxy's URL too", USAGE_ERROR)
    try:
        parse_faults(args.reference_fault)
    except ValueError as error:
        raise Refused(f"--reference-fault: {error}", USAGE_ERROR) from None
    with_faults = f", reproducing {', '.join(args.reference_fault)}" if args.reference_fault else ""
    say(f"lmconform check: no URL given, so the embedded reference server (LM Studio-like){with_faults}")
    return [word for fault in args.reference_fault for word in ("--reference-fault", fault)]


def _url(text: str, option: str) -> str:
    try:
        return normalize_base_url(text)
    except ValueError:
        raise Refused(f"{option} {text!r} is not a server address: {address_hint(text)}", USAGE_ERROR) from None

