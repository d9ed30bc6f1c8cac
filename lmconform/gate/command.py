"""`lmconform gate`: the proxy gate from the command line, against a proxy routing a model name per fault to
`lmconform serve`'s `/faults/NAME/v1` (docs/ci-gate.md). The exit status is 0 when the rows are as expected, 1 when
they differ (without expected rows: when the proxy introduced a failure), 2 for a usage or file error, 3 when a
target is unreachable. `--write-expect PATH` writes the rows found in the same format, keeping the reasons (and
`varies`) of the `--expect` rows."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from lmconform.api_table import APIS
from lmconform.cases import unmatched_case_patterns
from lmconform.exit_status import UNREACHABLE, USAGE_ERROR
from lmconform.expectations import ExpectationError
from lmconform.files import write_text_atomically
from lmconform.gate import (
    GATE_FAULTS,
    GateRow,
    GateTargets,
    gate_differences,
    gate_table,
    gate_toml,
    load_gate_file,
    run_gate,
    with_what_was_seen,
)
from lmconform.reference.faults import FAULTS
from lmconform.run import TargetUnreachable, discover
from lmconform.run.transparency import (
    StreamFuzz,
    findings_text,
    fuzz_streams,
    load_expected,
    serves_forms,
    stream_differences,
    stream_table,
    stream_toml,
)
from lmconform.target import address_hint, normalize_base_url
from lmconform.wire.redact import redact_text


def introduced_failures(rows: list[GateRow]) -> list[str]:
    """Without expected rows, every check the proxy fails only through itself is a difference: what it repairs or
    passes through is the upstream's defect, what it introduces is its own."""
    return [f"{row.fault}: introduced {with_what_was_seen(sorted(row.introduced), row)}" for row in rows if row.introduced]


def changed_streams(result: StreamFuzz) -> list[str]:
    """Without expected rows, every legal stream the proxy changed is a difference: a line per form's features."""
    return [f"{row.api} with {', '.join(f'`{feature}`' for feature in row.features) or 'no unusual form'}: "
            f"{', '.join(row.findings)}" for row in result.rows]


def register(subparsers) -> argparse.ArgumentParser:
    """Add `gate` to an argparse subparsers object; the handler is in the parser's defaults as `handler`."""
    parser = subparsers.add_parser(
        "gate", help="what a proxy does with each defect of its upstream: repaired, passed through, introduced",
        description="Run the suite against the reference server with each fault, straight and through a proxy "
                    "that routes a model name per fault to the server's /faults/NAME/v1, and sort each failing "
                    "check.")
    parser.add_argument("--proxy", required=True, metavar="URL", help="the proxy's base URL")
    parser.add_argument("--api-key", metavar="KEY", help="the proxy's API key")
    parser.add_argument("--upstream", required=True, metavar="URL",
                        help="the reference server the proxy forwards to (`lmconform serve`)")
    parser.add_argument("--model", required=True, metavar="NAME",
                        help="the model name the proxy routes to the clean reference server")
    parser.add_argument("--model-template", metavar="TEMPLATE",
                        help="the model name the proxy routes to a fault, with {fault} for its name (required but "
                             "with --stream-fuzz)")
    parser.add_argument("--clean-model", action="append", default=[], metavar="API=NAME",
                        help="the model name the proxy routes to the clean reference server for API's cases, where "
                             "it reaches the upstream through another provider than --model's (repeatable): "
                             "messages=NAME for LiteLLM's anthropic/ provider")
    parser.add_argument("--fault", action="append", metavar="NAME",
                        help="only this fault (repeatable); default: every fault but stall and body-too-large")
    parser.add_argument("--cases", action="append", metavar="GLOB",
                        help="play only the cases it names, by id (chat/void-weather-tool, chat/*) or name "
                             "(repeatable); default: every case of each fault's API")
    parser.add_argument("--stream-fuzz", type=int, metavar="N",
                        help="instead of the faults: N generated answers of the clean server, each in a legal but "
                             "unusual wire form, through the proxy and straight to the server; a difference shrinks "
                             "to the smallest form that causes it")
    parser.add_argument("--stream-seed", type=int, default=0, metavar="S",
                        help="the seed that draws the --stream-fuzz answers (default 0)")
    parser.add_argument("--write-expect", type=Path, metavar="PATH",
                        help="also write what was found as a gate file's [[fault]] rows (with --stream-fuzz: its "
                             "[stream_fuzz] section), to keep as the expected rows once each reason is written; a "
                             "row --expect holds keeps its reason")
    parser.add_argument("--expect", type=Path, metavar="GATE.toml", help="the expected rows; a difference exits 1")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="also write the rows as a Markdown table")
    parser.set_defaults(handler=run_gate_command)
    return parser


def _written(path: Path, text: str, stop: Callable[[str], int]) -> bool:
    try:
        write_text_atomically(path, text)
    except OSError as error:
        stop(f"{path}: cannot write: {error.strerror or error}")
        return False
    return True


def run_gate_command(args: argparse.Namespace) -> int:
    def stop(message: str, status: int = USAGE_ERROR) -> int:
        print(f"lmconform gate: {redact_text(message, (args.api_key,) if args.api_key else ())}", file=sys.stderr)
        return status

    if args.stream_fuzz is not None:
        if args.stream_fuzz < 1:
            return stop(f"--stream-fuzz takes a positive number of answers, not {args.stream_fuzz}")
        if args.fault or args.cases:
            return stop(f"{'--fault' if args.fault else '--cases'} and --stream-fuzz are two gates: --stream-fuzz "
                        "plays generated answers, not the faults' cases; run them one at a time")
    elif not args.model_template or "{fault}" not in args.model_template:
        return stop("--model-template must contain {fault}")
    faults = tuple(args.fault or GATE_FAULTS)
    unknown = [fault for fault in faults if fault not in FAULTS]
    if unknown:
        return stop(f"no fault is called {', '.join(unknown)} (see `lmconform faults`)")
    unnamed = list(unmatched_case_patterns(args.cases or ()))
    if unnamed:
        return stop(f"no case matches {', '.join(map(repr, unnamed))}; `pytest suites --collect-only -q` lists them")
    try:
        if args.stream_fuzz is not None:
            expected_fuzz = load_expected(args.expect) if args.expect else None
            if args.expect and expected_fuzz is None:
                return stop(f"{args.expect}: no [stream_fuzz] section to compare the answers with")
            drawn = (expected_fuzz.seed, expected_fuzz.examples) if expected_fuzz is not None else None
            if drawn is not None and drawn != (args.stream_seed, args.stream_fuzz):
                seed, examples = drawn
                return stop(f"{args.expect} holds the rows of {examples} answers drawn with seed {seed}: run with "
                            f"--stream-fuzz {examples} --stream-seed {seed}")
        else:
            expected_rows = load_gate_file(args.expect) if args.expect else None
    except ExpectationError as error:
        return stop(str(error))
    clean_models = {}
    for option in args.clean_model:
        api, _, name = option.partition("=")
        if api not in APIS or not name:
            return stop(f"--clean-model takes API=NAME with API one of {', '.join(APIS)}, not {option!r}")
        clean_models[api] = name
    urls = {}
    for option, url in (("--proxy", args.proxy), ("--upstream", args.upstream)):
        try:
            urls[option] = normalize_base_url(url)
        except ValueError:
            return stop(f"{option} must be an http(s) URL, not {url!r}: {address_hint(url)}")
    targets = GateTargets(urls["--proxy"], urls["--upstream"], args.model, args.model_template or "{fault}",
                          args.api_key, clean_models)

    for name, target in (("the proxy", targets.proxied()), ("the upstream", targets.straight())):
        try:
            discover(target)
        except TargetUnreachable as error:
            return stop(f"{name} at {target.base_url} cannot be reached: {error}", UNREACHABLE)
    if args.stream_fuzz is not None:
        if not serves_forms(targets.straight()):
            return stop(f"the upstream at {targets.upstream} answers no generated wire form: --stream-fuzz needs "
                        "lmconform's reference server there (lmconform serve)")
        result = fuzz_streams(targets.proxied(), targets.straight(), args.stream_fuzz, args.stream_seed)
        table = stream_table(result)
        print(table)
        if result.rows:
            print("\n" + findings_text(result))
        differences = (stream_differences(result, expected_fuzz) if expected_fuzz is not None
                       else changed_streams(result))
        if args.write_expect and not _written(args.write_expect, stream_toml(result), stop):
            return USAGE_ERROR
    else:
        rows = run_gate(faults, targets, cases=tuple(args.cases) if args.cases else None)
        table = gate_table(rows)
        print(table)
        differences = (gate_differences(rows, [row for row in expected_rows.rows if row.fault in faults])
                       if expected_rows else introduced_failures(rows))
        kept = expected_rows.rows if expected_rows else ()
        written = gate_toml(rows, {row.fault: row.reason for row in kept}, {row.fault: row.varies for row in kept})
        if args.write_expect and not _written(args.write_expect, written, stop):
            return USAGE_ERROR
    if args.markdown and not _written(args.markdown, table + "\n", stop):
        return USAGE_ERROR
    if differences:
        against = f"from {args.expect}" if args.expect else "made by the proxy (no --expect: every one is its doing)"
        return stop("\n".join([f"{len(differences)} differences {against}:", *differences]), 1)
    return 0
