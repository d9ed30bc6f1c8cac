"""The proxy gate: what a proxy does with each defect of its upstream, as a proxy project's CI would show it.

The upstream is the reference server with one fault at a time; the suite runs against it straight and through
the proxy. Of the checks the defect fails straight from the upstream, each one is *repaired* (it passes through
the proxy), *passed through* (it fails there too), or one the proxy fails anyway, with a clean upstream as well
(so the gate cannot tell). A check that fails only through the proxy, and not through the proxy with a clean
upstream either, is *introduced*: the proxy turned the defect into another one.

The expected rows are data (fixtures/gates/<proxy>.toml), compared exactly:

    proxy = "litellm"
    seen = "LiteLLM 1.106.2, openai/ provider, 2026-11-22"
    [[fault]]
    name = "tool-index-missing"
    repaired = ["chat.stream.tool_call.index_zero", "client.void.tool_call_parsed"]
    passed_through = []
    introduced = []
    proxy_fails_anyway = []
    reason = "it rebuilds every chunk and numbers the calls itself"
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lmconform.checks.registry import REGISTRY, Outcome
from lmconform.expectations import ExpectationError
from lmconform.reference.faults import FAULTS
from lmconform.runner import Run, run_suite
from lmconform.target import Target

# The API whose cases show a fault: an http fault shows on chat streams.
CASES_FOR_FAULT_API = {"chat": ("chat",), "responses": ("responses",), "models": ("models",), "http": ("chat",)}
KINDS = ("repaired", "passed_through", "introduced", "proxy_fails_anyway")
FAULT_KEYS = {"name", "reason", *KINDS}


@dataclass(frozen=True)
class GateRow:
    fault: str
    repaired: frozenset[str]
    passed_through: frozenset[str]
    introduced: frozenset[str]
    proxy_fails_anyway: frozenset[str]
    reason: str = ""


@dataclass(frozen=True)
class GateFile:
    path: Path
    proxy: str
    seen: str
    rows: tuple[GateRow, ...]


def failing_checks(run: Run) -> frozenset[str]:
    """The checks with a verdict other than OK on any case of the run."""
    return frozenset(verdict.check.id for verdict in run.verdicts if verdict.outcome is not Outcome.OK)


def gate_row(fault: str, straight: frozenset[str], proxied: frozenset[str], proxied_clean: frozenset[str]) -> GateRow:
    return GateRow(fault, repaired=straight - proxied, passed_through=(straight & proxied) - proxied_clean,
                   introduced=proxied - straight - proxied_clean, proxy_fails_anyway=straight & proxied & proxied_clean)


def run_gate(faults: Iterable[str], straight: Callable[[str | None], Target],
             proxied: Callable[[str | None], Target], workers: int = 4) -> list[GateRow]:
    """A row per fault; `straight(fault)` is the faulty upstream as a target, `proxied(fault)` the proxy in front
    of it, and `None` stands for the clean upstream. The runs wait on the proxy, so `workers` of them overlap."""
    faults = list(faults)
    apis_of = {fault: CASES_FOR_FAULT_API[FAULTS[fault].api] for fault in faults}
    with ThreadPoolExecutor(workers) as pool:
        def failing(target: Target, apis: tuple[str, ...]) -> Future[frozenset[str]]:
            return pool.submit(lambda: failing_checks(run_suite(target, apis)))

        clean = {apis: failing(proxied(None), apis) for apis in set(apis_of.values())}
        runs = {fault: (failing(straight(fault), apis), failing(proxied(fault), apis)) for fault, apis in apis_of.items()}
        return [gate_row(fault, runs[fault][0].result(), runs[fault][1].result(), clean[apis_of[fault]].result())
                for fault in faults]


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
        sets = {key: frozenset(raw.get(key, [])) for key in KINDS}
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
            got, expected_checks = getattr(row, kind), getattr(want, kind)
            if got != expected_checks:
                extra, missing = sorted(got - expected_checks), sorted(expected_checks - got)
                lines.append(f"{row.fault}: {kind.replace('_', ' ')}"
                             + (f" also {', '.join(extra)}" if extra else "")
                             + (f"; not {', '.join(missing)}" if missing else ""))
    return lines


def gate_table(rows: Iterable[GateRow]) -> str:
    """The rows as a Markdown table, a proxy project's compatibility statement."""
    lines = ["| upstream fault | repaired by the proxy | passed through | introduced | the proxy fails anyway |",
             "|---|---|---|---|---|"]
    for row in rows:
        cells = [", ".join(f"`{check}`" for check in sorted(getattr(row, kind))) or "-" for kind in KINDS]
        lines.append(f"| `{row.fault}` | {' | '.join(cells)} |")
    return "\n".join(lines)
