"""The proxy gate: what a proxy does with each defect of its upstream, as a proxy project's CI would show it.

The upstream is the reference server with one fault at a time; the suite runs against it straight and through
the proxy. Of the checks the defect fails straight from the upstream, each one is *repaired* (it passes through
the proxy), *passed through* (it fails there too), or one the proxy fails anyway, with a clean upstream as well
(so the gate cannot tell). A check that fails only through the proxy, and not through the proxy with a clean
upstream either, is *introduced*: the proxy turned the defect into another one. A check that fails straight from
the clean upstream too is about the upstream's own dialect (LM Studio's bare-string chat errors), not about the
fault: it is in no row.

The expected rows are data, compared exactly: a `[[fault]]` table per fault with its four lists of checks and the
reason (fixtures/gates/litellm.toml is LiteLLM's). From the command line, against a proxy routing a model name per
fault to `lmconform serve`'s `/faults/NAME/v1` (docs/ci-gate.md), the exit status is 0 when the rows are as expected,
1 when they differ (without expected rows: when the proxy introduced a failure), 2 for a usage or file error, 3 when a
target is unreachable.

Each fault is shown by the cases of its API: chat completions, Responses, Anthropic Messages. A proxy that
translates one API into another reaches the upstream's own door only through a provider of its own (LiteLLM
answers `/v1/messages` from the upstream's chat completions through `openai/`, and forwards it to the upstream's
`/v1/messages` through `anthropic/`, whose `api_base` is `/faults/NAME` without `/v1`): the Messages faults'
routes take that provider, and `--clean-model messages=NAME` names the clean upstream's route through it.
`--write-expect PATH` writes the rows found in the same format, keeping the reasons (and `varies`) of the
`--expect` rows.

With `--stream-fuzz N` the gate sends N generated answers of the clean server instead, each in a legal but unusual
wire form, through the proxy (the `--model` route) and straight to the server, and sorts what differs by the
smallest form that causes it (lmconform.run.transparency); the expected rows are the file's `[stream_fuzz]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lmconform.apis import APIS
from lmconform.checks.registry import REGISTRY
from lmconform.exit_status import UNREACHABLE, USAGE_ERROR
from lmconform.expectations import ExpectationError
from lmconform.files import write_text_atomically
from lmconform.reference.faults import FAULTS
from lmconform.reference.faults.registry import HTTP as HTTP_FAULTS
from lmconform.run import Run, TargetUnreachable, discover, run_suite
from lmconform.run.transparency import (
    StreamFuzz,
    findings_text,
    fuzz_streams,
    load_expected,
    serves_forms,
    stream_differences,
    stream_table,
    stream_toml,
    toml_strings,
)
from lmconform.settings import RunSettings
from lmconform.target import Target, normalize_base_url
from lmconform.vocabulary import Outcome
from lmconform.wire.redact import redact_text

# The API whose cases show a fault: its own, and for an http fault (framing, status) those of the APIs whose entries
# say their cases show the HTTP framing's faults.
CASES_FOR_FAULT_API = {**{name: (name,) for name in APIS},
                       HTTP_FAULTS: tuple(name for name, api in APIS.items() if api.shows_http_faults)}
# Generated cases are left out (GateTargets says why).
NO_GENERATED = RunSettings(fuzz_examples=0)
# A stream that stalls for minutes or pads a gigabyte tests a client's timeout and cap, not what a proxy forwards.
GATE_FAULTS = tuple(fault for fault in FAULTS if fault not in ("stall", "body-too-large"))
KINDS = ("repaired", "passed_through", "introduced", "proxy_fails_anyway")
FAULT_KEYS = {"name", "reason", "varies", *KINDS}


@dataclass(frozen=True)
class GateRow:
    fault: str
    repaired: frozenset[str]
    passed_through: frozenset[str]
    introduced: frozenset[str]
    proxy_fails_anyway: frozenset[str]
    reason: str = ""
    # Checks whose place in the row is a race in the proxy (how it reads a body that ends before or after its
    # Content-Length, say), seen both ways: compared nowhere, named with the reason.
    varies: frozenset[str] = frozenset()
    # What the proxy answered for each check it failed ("case: actual"): a difference says what the proxy did.
    seen: Mapping[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class GateFile:
    path: Path
    proxy: str
    seen: str
    rows: tuple[GateRow, ...]


def failing_checks(run: Run, cases: Callable[[str], bool] = lambda case: True) -> dict[str, str]:
    """The checks with a verdict other than OK on any case of the run (of those `cases` keeps), each with what its
    first such verdict saw: "case: actual"."""
    found: dict[str, str] = {}
    for verdict in run.verdicts:
        if verdict.outcome is not Outcome.OK and cases(verdict.case_id):
            actual = verdict.failures[0].actual if verdict.failures else verdict.detail or verdict.outcome.value
            found.setdefault(verdict.check.id, f"{verdict.case_id}: {actual}")
    return found


def gate_row(fault: str, straight: Iterable[str], proxied: Mapping[str, str] | Iterable[str],
             proxied_clean: Iterable[str], straight_clean: Iterable[str] = ()) -> GateRow:
    """The row of a fault from the checks each run failed; `proxied` may say what the proxy answered for each."""
    failed, clean, upstream_clean = frozenset(proxied), frozenset(proxied_clean), frozenset(straight_clean)
    straight = frozenset(straight) - upstream_clean  # the upstream fails those without the fault: the fault is not why
    return GateRow(fault, repaired=straight - failed, passed_through=(straight & failed) - clean,
                   introduced=failed - straight - upstream_clean - clean, proxy_fails_anyway=straight & failed & clean,
                   seen=dict(proxied) if isinstance(proxied, Mapping) else {})


@dataclass(frozen=True)
class GateTargets:
    """Where the gate sends its runs: the upstream straight (under `/faults/NAME` for a fault) and the proxy, which
    routes the model name `model_template` makes of a fault to that prefix and `model` to the clean upstream.

    A proxy may reach the upstream through another provider for one API than for the others (LiteLLM forwards
    Anthropic Messages untranslated only through its `anthropic/` provider): `clean_models` names, per API, the
    route to the clean upstream that API's cases go through instead of `model`; its faults' routes take the same
    provider in the proxy's own configuration.

    Generated cases are left out: each is a few dozen requests through the proxy per fault, and the chain defects
    they find are shown by the chain cases already."""

    proxy: str
    upstream: str
    model: str
    model_template: str = "{fault}"
    api_key: str | None = None
    clean_models: Mapping[str, str] = field(default_factory=dict)

    def straight(self, fault: str | None = None) -> Target:
        return Target(self.upstream + (f"/faults/{fault}" if fault else ""), model=self.model)

    def proxied(self, fault: str | None = None, apis: tuple[str, ...] = ()) -> Target:
        """The proxy, routing to `fault` (None: to the clean upstream, by the route of the `apis` sent)."""
        clean = next((self.clean_models[api] for api in apis if api in self.clean_models), self.model)
        return Target(self.proxy, api_key=self.api_key,
                      model=self.model_template.format(fault=fault) if fault else clean)


def run_gate(faults: Iterable[str], targets: GateTargets, workers: int = 4,
             cases_of: Callable[[str], frozenset[str]] | None = None,
             proxied_where_it_fails: bool = False) -> list[GateRow]:
    """A row per fault, each from four runs of the cases of its API: the upstream with the fault and clean, each
    straight and through the proxy. The runs wait on the proxy, so `workers` of them overlap.

    `cases_of(fault)`, where the caller knows it (lmconform's own tests, from the fault catalogue), names the cases
    where the fault shows: its runs play only those, and every other case counts as it did in the clean runs, which
    played it already. `proxied_where_it_fails` narrows the proxy's run to the cases the straight run failed on: the
    same assumption at the grain of a case, blind to a proxy that fails only on a change no check reads, so only
    lmconform's own tests, which compare the rows with a file, make it."""
    faults = list(faults)
    apis_of = {fault: CASES_FOR_FAULT_API[FAULTS[fault].api] for fault in faults}
    with ThreadPoolExecutor(workers) as pool:
        def played(target: Target, apis: tuple[str, ...], only: frozenset[str] | None = None) -> Future[Run]:
            cases = None if only is None else tuple(sorted(only))
            return pool.submit(lambda: run_suite(target, apis, settings=NO_GENERATED, cases=cases))

        clean = {apis: played(targets.proxied(None, apis), apis) for apis in set(apis_of.values())}
        upstream_clean = {apis: played(targets.straight(None), apis) for apis in set(apis_of.values())}
        straight_only = {fault: cases_of(fault) if cases_of else None for fault in faults}
        straight = {fault: played(targets.straight(fault), apis, straight_only[fault]) for fault, apis in apis_of.items()}
        proxied_only = straight_only if not proxied_where_it_fails else {
            fault: frozenset(verdict.case_id for verdict in straight[fault].result().verdicts
                             if verdict.outcome is not Outcome.OK) for fault in faults}
        # A fault that failed nothing straight leaves the proxy nothing to play: its clean run is the whole answer.
        proxied = {fault: played(targets.proxied(fault, apis), apis, proxied_only[fault])
                   for fault, apis in apis_of.items() if proxied_only[fault] != frozenset()}

        def with_the_rest(run: Future[Run] | None, clean_run: Run, played_cases: frozenset[str] | None) -> dict[str, str]:
            """What the fault's run failed (None: it played nothing), and on the cases it left out the clean run's."""
            own = failing_checks(run.result()) if run else {}
            rest = {} if played_cases is None else failing_checks(clean_run, lambda case: case not in played_cases)
            return rest | own

        rows = []
        for fault, apis in apis_of.items():
            proxied_clean, straight_clean = clean[apis].result(), upstream_clean[apis].result()
            rows.append(gate_row(fault, with_the_rest(straight[fault], straight_clean, straight_only[fault]),
                                 with_the_rest(proxied.get(fault), proxied_clean, proxied_only[fault]),
                                 failing_checks(proxied_clean), failing_checks(straight_clean)))
        return rows


def load_gate_file(path: Path) -> GateFile:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ExpectationError(f"{path}: {error}") from error
    rows = []
    for raw in data.get("fault", []):
        unknown = set(raw) - FAULT_KEYS
        if unknown or "name" not in raw:
            raise ExpectationError(f"{path}: a [[fault]] has {', '.join(sorted(unknown)) or 'no name'}")
        if raw["name"] not in FAULTS:
            raise ExpectationError(f"{path}: no fault is called {raw['name']!r} (see `lmconform faults`)")
        sets = {key: frozenset(raw.get(key, [])) for key in (*KINDS, "varies")}
        typos = sorted(check for checks in sets.values() for check in checks if check not in REGISTRY)
        if typos:
            raise ExpectationError(f"{path}: fault {raw['name']}: no check is called {', '.join(typos)}")
        rows.append(GateRow(raw["name"], reason=raw.get("reason", ""), **sets))
    return GateFile(path, data.get("proxy", path.stem), data.get("seen", ""), tuple(rows))


def gate_differences(found: list[GateRow], expected: Iterable[GateRow]) -> list[str]:
    """Every way the rows differ from the expected ones, a line each."""
    by_fault = {row.fault: row for row in expected}
    lines = []
    for row in found:
        want = by_fault.get(row.fault)
        if want is None:
            lines.append(f"{row.fault}: not in the expected rows")
            continue
        for kind in KINDS:
            got, expected_checks = getattr(row, kind) - want.varies, getattr(want, kind) - want.varies
            if got != expected_checks:
                extra, missing = sorted(got - expected_checks), sorted(expected_checks - got)
                lines.append(f"{row.fault}: {kind.replace('_', ' ')}"
                             + (f" also {_with_what_was_seen(extra, row)}" if extra else "")
                             + (f"; not {', '.join(missing)}" if missing else ""))
    return lines


def _with_what_was_seen(checks: Iterable[str], row: GateRow) -> str:
    return ", ".join(f"{check} ({row.seen[check][:300]})" if check in row.seen else check for check in checks)


def gate_table(rows: Iterable[GateRow]) -> str:
    """The rows as a Markdown table, a proxy project's compatibility statement."""
    lines = ["| upstream fault | repaired by the proxy | passed through | introduced | the proxy fails anyway |",
             "|---|---|---|---|---|"]
    for row in rows:
        cells = [", ".join(f"`{check}`" for check in sorted(getattr(row, kind))) or "-" for kind in KINDS]
        lines.append(f"| `{row.fault}` | {' | '.join(cells)} |")
    return "\n".join(lines)


def gate_toml(rows: Iterable[GateRow], reasons: Mapping[str, str] | None = None,
              varies: Mapping[str, frozenset[str]] | None = None) -> str:
    """The rows as a gate file's `[[fault]]` entries, to keep as the expected rows: each with the reason `reasons`
    gives its fault, or one to write, and the checks `varies` names for it."""
    blocks = []
    for row in rows:
        reason = (reasons or {}).get(row.fault) or f"what the proxy does: {gate_table([row]).splitlines()[-1]}"
        racing = sorted((varies or {}).get(row.fault, ()))
        blocks.append("\n".join(["[[fault]]", f"name = {json.dumps(row.fault)}",
                                 *(f"{kind} = {toml_strings(sorted(getattr(row, kind)))}" for kind in KINDS),
                                 *([f"varies = {toml_strings(racing)}"] if racing else []),
                                 f"reason = {json.dumps(reason, ensure_ascii=False)}"]))
    return "\n\n".join(blocks) + "\n"


def introduced_failures(rows: list[GateRow]) -> list[str]:
    """Without expected rows, every check the proxy fails only through itself is a difference: what it repairs or
    passes through is the upstream's defect, what it introduces is its own."""
    return [f"{row.fault}: introduced {_with_what_was_seen(sorted(row.introduced), row)}" for row in rows if row.introduced]


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
        print(f"lmconform gate: {redact_text(message, [args.api_key] if args.api_key else [])}", file=sys.stderr)
        return status

    if args.stream_fuzz is not None:
        if args.stream_fuzz < 1:
            return stop(f"--stream-fuzz takes a positive number of answers, not {args.stream_fuzz}")
        if args.fault:
            return stop("--fault and --stream-fuzz are two gates: run them one at a time")
    elif not args.model_template or "{fault}" not in args.model_template:
        return stop("--model-template must contain {fault}")
    faults = tuple(args.fault or GATE_FAULTS)
    unknown = [fault for fault in faults if fault not in FAULTS]
    if unknown:
        return stop(f"no fault is called {', '.join(unknown)} (see `lmconform faults`)")
    try:
        if args.stream_fuzz is not None:
            expected = load_expected(args.expect) if args.expect else None
            if args.expect and expected is None:
                return stop(f"{args.expect}: no [stream_fuzz] section to compare the answers with")
            if expected is not None and (expected.seed, expected.examples) != (args.stream_seed, args.stream_fuzz):
                return stop(f"{args.expect} holds the rows of {expected.examples} answers drawn with seed "
                            f"{expected.seed}: run with --stream-fuzz {expected.examples} --stream-seed {expected.seed}")
        else:
            expected = load_gate_file(args.expect) if args.expect else None
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
            return stop(f"{option} must be an http(s) URL such as http://127.0.0.1:4000, not {url!r}")
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
        differences = stream_differences(result, expected) if expected is not None else changed_streams(result)
        if args.write_expect and not _written(args.write_expect, stream_toml(result), stop):
            return USAGE_ERROR
    else:
        rows = run_gate(faults, targets)
        table = gate_table(rows)
        print(table)
        differences = (gate_differences(rows, [row for row in expected.rows if row.fault in faults]) if expected
                       else introduced_failures(rows))
        kept = expected.rows if expected else ()
        written = gate_toml(rows, {row.fault: row.reason for row in kept}, {row.fault: row.varies for row in kept})
        if args.write_expect and not _written(args.write_expect, written, stop):
            return USAGE_ERROR
    if args.markdown and not _written(args.markdown, table + "\n", stop):
        return USAGE_ERROR
    if differences:
        against = f"from {args.expect}" if args.expect else "made by the proxy (no --expect: every one is its doing)"
        return stop("\n".join([f"{len(differences)} differences {against}:", *differences]), 1)
    return 0
