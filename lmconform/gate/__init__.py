"""The proxy gate: what a proxy does with each defect of its upstream, as a proxy project's CI would show it.

The upstream is the reference server with one fault at a time; the suite runs against it straight and through
the proxy. Of the checks the defect fails straight from the upstream, each one is *repaired* (it passes through
the proxy), *passed through* (it fails there too), or one the proxy fails anyway, with a clean upstream as well
(so the gate cannot tell). A check that fails only through the proxy, and not through the proxy with a clean
upstream either, is *introduced*: the proxy turned the defect into another one. A check that fails straight from
the clean upstream too is about the upstream's own dialect (LM Studio's bare-string chat errors), not about the
fault: it is in no row.

The expected rows are data, compared exactly: a `[[fault]]` table per fault with its four lists of checks and the
reason (fixtures/gates/litellm.toml is LiteLLM's). `lmconform gate` (command.py) runs it from the command line.

Each fault is shown by the cases of its API: chat completions, Responses, Anthropic Messages. A proxy that
translates one API into another reaches the upstream's own door only through a provider of its own (LiteLLM
answers `/v1/messages` from the upstream's chat completions through `openai/`, and forwards it to the upstream's
`/v1/messages` through `anthropic/`, whose `api_base` is `/faults/NAME` without `/v1`): the Messages faults'
routes take that provider, and `--clean-model messages=NAME` names the clean upstream's route through it.

With `--stream-fuzz N` the gate sends N generated answers of the clean server instead, each in a legal but unusual
wire form, through the proxy (the `--model` route) and straight to the server, and sorts what differs by the
smallest form that causes it (lmconform.run.transparency); the expected rows are the file's `[stream_fuzz]`.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from lmconform.api_table import APIS
from lmconform.cases import load_cases
from lmconform.checks.registry import REGISTRY
from lmconform.expectations import ExpectationError
from lmconform.reference.faults import FAULTS
from lmconform.reference.faults.registry import HTTP as HTTP_FAULTS
from lmconform.run import Run, run_suite
from lmconform.run.transparency import toml_strings
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Outcome

# The API whose cases show a fault: its own, and for an http fault (framing, status) those of the APIs whose entries
# say their cases show the HTTP framing's faults.
CASES_FOR_FAULT_API = {**{name: (name,) for name in APIS},
                       HTTP_FAULTS: tuple(name for name, api in APIS.items() if api.shows_http_faults)}
# Generated cases are left out (GateTargets says why).
NO_GENERATED = RunSettings(fuzz_examples=0)
# A stream that stalls for minutes or pads a gigabyte tests a client's timeout and cap, and a request refused once to be
# answered when sent again tests a client's retries: none of them what a proxy forwards.
CLIENT_LIMITS = ("stall", "body-too-large", "model-loading-once")
GATE_FAULTS = tuple(fault for fault in FAULTS if fault not in CLIENT_LIMITS)
# The upstream is lmconform's reference server, which answers every request at once: a silence from it is a fault's
# (a Responses stream over a WebSocket that never sends `response.completed` leaves the socket open), and a client
# waiting 30 s on each such case kept the gate waiting minutes. The fault catalogue waits as long for the same server.
# The proxy keeps the default: what it does on a slow upstream is its own.
UPSTREAM_READ_TIMEOUT_S = 5.0
# The cases of one run through the proxy, at most (run_gate).
PROXIED_RUN_CASES = 12
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
    first such verdict saw: "case: actual". A known limit of the target's dialect is no finding of the check (the
    clean upstream refusing Codex's tools as LM Studio does would otherwise hide that check from every fault's row)."""
    found: dict[str, str] = {}
    for verdict in run.verdicts:
        if verdict.outcome is not Outcome.OK and not verdict.known_limit and cases(verdict.case_id):
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
        return Target(self.upstream + (f"/faults/{fault}" if fault else ""), model=self.model,
                      read_timeout=UPSTREAM_READ_TIMEOUT_S)

    def proxied(self, fault: str | None = None, apis: tuple[str, ...] = ()) -> Target:
        """The proxy, routing to `fault` (None: to the clean upstream, by the route of the `apis` sent)."""
        clean = next((self.clean_models[api] for api in apis if api in self.clean_models), self.model)
        return Target(self.proxy, api_key=self.api_key,
                      model=self.model_template.format(fault=fault) if fault else clean)


def run_gate(faults: Iterable[str], targets: GateTargets, workers: int = 4,
             cases_of: Callable[[str], frozenset[str]] | None = None,
             proxied_where_it_fails: bool = False, cases: tuple[str, ...] | None = None) -> list[GateRow]:
    """A row per fault, each from four runs of the cases of its API (those the globs `cases` name, when given): the
    upstream with the fault and clean, each straight and through the proxy. The runs wait on the proxy and on the
    upstream, so `workers` of each overlap.

    `cases_of(fault)`, where the caller knows it (lmconform's own tests, from the fault catalogue), names the cases
    where the fault shows: its runs play only those, and every other case counts as it did in the clean runs, which
    played it already. `proxied_where_it_fails` narrows the proxy's run to the cases the straight run failed on: the
    same assumption at the grain of a case, blind to a proxy that fails only on a change no check reads, so only
    lmconform's own tests, which compare the rows with a file, make it."""
    faults = list(faults)
    apis_of = {fault: CASES_FOR_FAULT_API[FAULTS[fault].api] for fault in faults}
    named = None if cases is None else frozenset(case.id for api in APIS for case in load_cases(api)
                                                 if any(case.named_by(pattern) for pattern in cases))
    # Two pools: a run straight from the upstream never keeps a run through the proxy waiting for a thread, and the
    # proxy is sent `workers` runs at a time, never more. With `proxied_where_it_fails` a fault's run through the
    # proxy starts as soon as its straight run has ended, while the others' go on.
    with ThreadPoolExecutor(workers) as upstream_pool, ThreadPoolExecutor(workers) as proxy_pool:
        def played(target: Target, apis: tuple[str, ...], only: frozenset[str] | None = None,
                   pool: ThreadPoolExecutor = upstream_pool) -> Future[Run]:
            chosen = only if named is None else named if only is None else only & named
            ids = None if chosen is None else tuple(sorted(case for case in chosen if case.split("/")[0] in apis))
            return pool.submit(lambda: run_suite(target, apis, settings=NO_GENERATED, cases=ids))

        clean = {apis: played(targets.proxied(None, apis), apis, pool=proxy_pool) for apis in set(apis_of.values())}
        upstream_clean = {apis: played(targets.straight(None), apis) for apis in set(apis_of.values())}
        straight_only = {fault: cases_of(fault) if cases_of else None for fault in faults}
        straight = {fault: played(targets.straight(fault), apis, straight_only[fault]) for fault, apis in apis_of.items()}
        proxied_only = dict(straight_only)
        proxied: dict[str, list[Future[Run]]] = {}

        def through_the_proxy(fault: str) -> None:
            """The fault's runs through the proxy, PROXIED_RUN_CASES cases each when they are named: a proxy that
            waits seconds on each answer it cannot read (LiteLLM on a body longer than its Content-Length, retried)
            kept one thread six minutes with a fault's 76 cases while the other threads had ended."""
            only, apis = proxied_only[fault], apis_of[fault]
            chunks = [None] if only is None else [frozenset(sorted(only)[start:start + PROXIED_RUN_CASES])
                                                  for start in range(0, len(only), PROXIED_RUN_CASES)]
            proxied[fault] = [played(targets.proxied(fault, apis), apis, chunk, pool=proxy_pool) for chunk in chunks]

        if proxied_where_it_fails:
            fault_of = {future: fault for fault, future in straight.items()}
            for future in as_completed(fault_of):
                proxied_only[fault_of[future]] = frozenset(verdict.case_id for verdict in future.result().verdicts
                                                           if verdict.outcome is not Outcome.OK)
                through_the_proxy(fault_of[future])
        else:
            for fault in faults:
                through_the_proxy(fault)

        def with_the_rest(runs: Iterable[Future[Run]], clean_run: Run,
                          played_cases: frozenset[str] | None) -> dict[str, str]:
            """What the fault's runs failed (a fault that failed nothing straight has none through the proxy: its
            clean run is the whole answer), and on the cases they left out the clean run's."""
            own: dict[str, str] = {}
            for run in runs:
                for check, seen in failing_checks(run.result()).items():
                    own.setdefault(check, seen)
            rest = {} if played_cases is None else failing_checks(clean_run, lambda case: case not in played_cases)
            return rest | own

        rows = []
        for fault, apis in apis_of.items():
            proxied_clean, straight_clean = clean[apis].result(), upstream_clean[apis].result()
            rows.append(gate_row(fault, with_the_rest([straight[fault]], straight_clean, straight_only[fault]),
                                 with_the_rest(proxied[fault], proxied_clean, proxied_only[fault]),
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
        rows.append(GateRow(raw["name"], reason=raw.get("reason", ""), repaired=sets["repaired"],
                            passed_through=sets["passed_through"], introduced=sets["introduced"],
                            proxy_fails_anyway=sets["proxy_fails_anyway"], varies=sets["varies"]))
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
                             + (f" also {with_what_was_seen(extra, row)}" if extra else "")
                             + (f"; not {', '.join(missing)}" if missing else ""))
    return lines


def with_what_was_seen(checks: Iterable[str], row: GateRow) -> str:
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
