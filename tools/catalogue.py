"""`make catalogue`: the fault × check table (fixtures/catalogue.toml), written from runs, never by hand.

For each fault of the reference server's catalogue (lmconform.reference.faults), the checks that fail when the suite
runs against the server with it (`findings`) and, for the faults that prove a differential check (its `proven_by`),
those that fail in differential mode with the clean server as the upstream (`proxy_findings`); for each fault of the
reference bridge (lmconform.bridge.faults), the vscodelm checks that fail with it in the strict cancel profile
(`findings`) and, where they differ, in the symposium one (`symposium_findings`). Each row also names the cases where
its findings show first (`shown_by`, one per finding): `make check` plays those and a sample of the rest rather than
every case a finding's check judges. tests/test_fault_catalogue.py and
tests/test_bridge_catalogue.py run the same runs and compare them with the table exactly; a check names the faults
that prove it (`proven_by`), and those tests hold each name to the table.

Adding a check is the check, its fault, and `make catalogue`; the command then rewrites the real servers' expected
verdicts too (tests/test_real_targets.py with LMCONFORM_WRITE_EXPECTED), which needs them installed (`make
targets`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import socket
import sys
import tomllib
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from lmconform.api_table import APIS
from lmconform.apis.responses.reference.faults.lifecycle import PREFILL_S
from lmconform.bridge import FAULTS as BRIDGE_FAULTS
from lmconform.cases import Case, load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.observed import AnyObserved
from lmconform.files import write_text_atomically
from lmconform.fuzz import requests
from lmconform.reference import (
    FAULTS,
    ReferenceServer,
    refusal,  # noqa: F401  (declares bounds-ignored, which the doors import lazily)
)
from lmconform.reference.app import CHANGED_BY_HEADER
from lmconform.run import Run, RunPlan, run_suite
from lmconform.run.plan import embedded_bridge
from lmconform.run.run import applies, feature_probe
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import FINDINGS
from lmconform.wire.http import HttpExchange

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "fixtures" / "catalogue.toml"
BRIDGE_PROFILES = ("strict", "symposium")
HEADER = """\
# The fault × check table: for each fault of the reference server (lmconform.reference.faults), the checks that fail
# when the suite runs against the server with it (findings) and, for a fault that proves a differential check, those
# that fail in differential mode with the clean server as the upstream (proxy_findings); for each fault of the
# reference bridge (lmconform.bridge.faults), the vscodelm checks that fail with it (findings), and in the symposium
# cancel profile where they differ (symposium_findings); and the first case on which each finding shows (shown_by),
# which `make check` plays instead of every case. Written by `make catalogue` from those runs
# (tools/catalogue.py); the tests run them again and compare. Not edited by hand.
"""


@dataclass(frozen=True)
class Row:
    findings: frozenset[str] = frozenset()
    proxy_findings: frozenset[str] = frozenset()  # server faults only
    symposium_findings: frozenset[str] | None = None  # bridge faults only, where the profile changes them
    # The first case each finding shows on: in differential mode too, for the server; in either profile, for the bridge.
    shown_by: frozenset[str] = frozenset()

    def failed(self) -> frozenset[str]:
        """The checks the fault makes fail in any of its runs."""
        return self.findings | self.proxy_findings | (self.symposium_findings or frozenset())

    def proves(self, check: str) -> bool:
        return check in self.failed()


@dataclass(frozen=True)
class Table:
    server: dict[str, Row]
    bridge: dict[str, Row]

    def row(self, fault: str) -> Row | None:
        return self.server.get(fault) or self.bridge.get(fault)


def load(path: Path = CATALOGUE) -> Table:
    data = tomllib.loads(path.read_text())

    def rows(section: dict) -> dict[str, Row]:
        return {name: Row(frozenset(row.get("findings", ())), frozenset(row.get("proxy_findings", ())),
                          frozenset(row["symposium_findings"]) if "symposium_findings" in row else None,
                          frozenset(row.get("shown_by", ())))
                for name, row in section.items()}

    return Table(rows(data.get("server", {})), rows(data.get("bridge", {})))


def dumps(table: Table) -> str:
    """The table as TOML, the faults in catalogue order, each list sorted: a run writes the same text every time."""
    lines = [HEADER.rstrip("\n")]
    for section, rows in (("server", table.server), ("bridge", table.bridge)):
        for name, row in rows.items():
            lines += ["", f"[{section}.{name}]", f"findings = {_strings(row.findings)}"]
            if row.proxy_findings:
                lines.append(f"proxy_findings = {_strings(row.proxy_findings)}")
            if row.symposium_findings is not None:
                lines.append(f"symposium_findings = {_strings(row.symposium_findings)}")
            if row.shown_by:
                lines.append(f"shown_by = {_strings(row.shown_by)}")
    return "\n".join(lines) + "\n"


def _strings(values: Iterable[str]) -> str:
    return "[" + ", ".join(json.dumps(value) for value in sorted(values)) + "]"


# --- the runs ------------------------------------------------------------------------------------------------------

def findings_of(run: Run) -> set[str]:
    """The checks a run fails, but for the known limits of the reference server's dialect (LM Studio's), which the
    clean server has too: a fault's row is what the fault adds."""
    return {verdict.check.id for verdict in run.verdicts if verdict.outcome in FINDINGS and not verdict.known_limit}


def first_shown_on(run: Run) -> set[str]:
    """The case where each finding of `run` shows first, in the order the run judged them: a written case where the
    finding shows on one, which plays in a moment and the same way every time, else a generated one."""
    written = {case.id for api in APIS for case in load_cases(api) if not case.source}
    first: dict[str, str] = {}
    for verdict in sorted(run.verdicts, key=lambda verdict: verdict.case_id not in written):
        if verdict.outcome in FINDINGS and not verdict.known_limit:
            first.setdefault(verdict.check.id, verdict.case_id)
    return set(first.values())


def cases_judged_by(checks: Iterable[str], apis: Iterable[str] = APIS) -> set[str]:
    """The ids of the cases of `apis` that any of `checks` judges: the only cases where those checks can fail."""
    judging = [REGISTRY[check] for check in checks]
    return {case.id for api in apis for case in load_cases(api) if any(applies(check, case) for check in judging)}


def _plan(base_url: str, fault: str | None, settings: RunSettings = RunSettings(),
          checks: Iterable[str] = ()) -> RunPlan:
    # A 1 MiB cap proves the body-cap finding as well as the default would, without reading 32 MiB per case.
    # The idle limit is lowered under the prefill the fault plays (Codex's own, 300 s, would take minutes to pass).
    target = Target(base_url=base_url + (f"/faults/{fault}" if fault else ""), read_timeout=5, profile="reference",
                    max_body_bytes=1 << 20, stream_idle_limit_s=PREFILL_S / 2)
    return RunPlan(target, include=tuple(checks), probe=True, settings=settings)


def server_run(base_url: str, fault: str | None, apis: tuple[str, ...] | None = None,
               cases: set[str] | None = None, settings: RunSettings = RunSettings(), checks: Iterable[str] = (),
               clean: Run | None = None) -> Run:
    """The suite against the reference server at `base_url` with `fault` (None: clean), on the cases of `apis` (all
    by default), or only those of them `cases` names, with every check or only `checks`. Generated requests (200 a run with the default `settings`)
    are played against the clean server and the faults only they reach; a fault the written cases and the chain
    programs find is proven on those, which keeps the catalogue to minutes.

    `clean`, the clean server's plays (clean_plays), for a fault its trace follows (Fault.traced): a case whose clean
    answers the clean server says the fault would not change (changed_by) is neither played nor judged, for the clean
    server passes every check on it (tests/test_fault_catalogue.py holds it to that). Most faults change the answers of a few cases of their API."""
    plan = _plan(base_url, fault, settings, checks)
    requests_too = fault is None or FAULTS[fault].generated_only
    run = plan.start()
    # What the run found out before its first case (the model, the fingerprint) is part of every case's requests.
    compared = (clean is not None and fault is not None and FAULTS[fault].traced
                and replace(run.target, base_url="") == replace(clean.target, base_url=""))
    unchanged: dict[str, bool] = {}

    def as_clean(case: Case) -> bool:
        # An overflowing prompt is sized from what the server states of its context (lmconform.run.overflow), in
        # requests of its own that no answer of the case traces.
        if not compared or clean is None or case.overflows_context:
            return False
        if case.id not in unchanged:
            probe = feature_probe(case.api, case.feature) if case.feature else None  # its answer decides the case's
            changing = changed_by([*clean.examples(case), *(clean.examples(probe) if probe is not None else [])])
            unchanged[case.id] = changing is not None and fault not in changing
        return unchanged[case.id]

    try:
        for api in apis or plan.apis:
            for case, check in plan.pairs(api):
                if ((requests_too or case.source != requests.SOURCE) and (cases is None or case.id in cases)
                        and not as_clean(case)):
                    run.judge(case, check)
    finally:
        run.close()
    return run


def clean_plays(base_url: str, settings: RunSettings = RunSettings()) -> Run:
    """A run against the clean server at `base_url`, as server_run starts one, that judges nothing and asks the
    server which faults would change each answer (its `/changed-by` prefix): what a fault's run consults (server_run's
    `clean`), each case played once when first asked for. The caller closes it."""
    return _plan(base_url + "/changed-by", None, settings).start()


def changed_by(observations: Iterable[AnyObserved]) -> set[str] | None:
    """The faults that would change any answer of a case's plays against the clean server's `/changed-by` prefix;
    None where an answer does not say (a WebSocket's, or a server without the prefix)."""
    changing: set[str] = set()
    for observed in observations:
        for exchange in observed.exchanges():
            named = exchange.headers.get(CHANGED_BY_HEADER.lower()) if isinstance(exchange, HttpExchange) else None
            if named is None:
                return None
            changing.update(name for name in named.split(",") if name)
    return changing


# The parts of two plays of one request that differ by when they were sent: the times of creation and completion
# (seconds since the epoch, ten digits) and the ids drawn at random (`resp_` and 24 hex digits, `call_` and 16
# digits), each of which becomes its place of first appearance, so that an answer reusing an id where the clean
# server gives a new one still differs.
CREATED = re.compile(rb'("(?:created|created_at|completed_at)"\s*:\s*)\d{10}(?=[\s,}])')
RANDOM_ID = re.compile(rb"\b[a-z]+_(?:[0-9a-f]{24}|[0-9]{16})(?![0-9a-f])")


def without_draws(data: bytes, ids: dict[bytes, int]) -> bytes:
    """`data` with CREATED masked and each RANDOM_ID replaced by its place in `ids`, the ids seen so far."""
    return RANDOM_ID.sub(lambda found: b"id%d" % ids.setdefault(found.group(), len(ids)), CREATED.sub(rb"\1T", data))


def answers_form(observations: Iterable[AnyObserved]) -> tuple | None:
    """What a case's plays sent and got, in a form two plays with the same answers share: each request's method and
    body, each answer's status, headers but its date and the changed-by header, body and error, with CREATED and
    RANDOM_ID masked. None where an answer is not HTTP (a WebSocket's), which is then judged whatever it says."""
    ids: dict[bytes, int] = {}
    form: list = []
    for observed in observations:
        exchanges = [observed.exchange, *(turn.exchange for turn in observed.turns.values()), *observed.paired.values()]
        if not all(isinstance(exchange, HttpExchange) for exchange in exchanges if exchange is not None):
            return None
        form.append((observed.feature_missing, observed.unsupported,
                     tuple(turn.skipped for turn in observed.turns.values())))
        for exchange in exchanges:
            if exchange is None:
                form.append(None)
                continue
            request = json.dumps(exchange.request.body, sort_keys=True, default=repr).encode()
            headers = json.dumps(sorted(item for item in exchange.headers.items()
                                        if item[0] not in ("date", CHANGED_BY_HEADER.lower()))).encode()
            form.append((exchange.request.method, without_draws(request, ids), exchange.status, without_draws(headers, ids),
                         without_draws(b"".join(chunk.data for chunk in exchange.chunks), ids), exchange.error,
                         exchange.error_kind, exchange.truncated))
    return tuple(form)


def catalogue_order() -> list[str]:
    """The reference server's faults in catalogue order (lmconform.reference.faults): each API's, in the table's
    order, then the server's as a whole, the transport's and the schemas' refusal's, each module's in the order it
    declares them. The registry holds them in the order their modules were first imported, which depends on what
    the process imported before: the table is written, and compared, in this order instead."""
    groups = [*(f"lmconform.apis.{api}." for api in APIS), "lmconform.reference.faults.server",
              "lmconform.reference.faults.transport", "lmconform.reference.refusal"]

    def rank(name: str) -> int:
        return next((place for place, prefix in enumerate(groups) if FAULTS[name].module.startswith(prefix)),
                    len(groups))

    return sorted(FAULTS, key=rank)


def differential_faults() -> list[str]:
    """The faults run in differential mode: those that prove a differential check, in catalogue order."""
    named = {name for check in REGISTRY.values() if check.kind == "differential" for name in check.proven_by}
    return [name for name in FAULTS if name in named]


def proxy_run(base_url: str, fault: str | None, cases: Iterable[str] | None = None) -> Run:
    """The proxy checks in differential mode: the clean server as the upstream, the server with `fault` as the
    proxy; every case, or those `cases` names."""
    proxy = base_url + (f"/faults/{fault}" if fault else "")
    return run_suite(Target(base_url=proxy), include=["proxy.*"], upstream=Target(base_url=base_url),
                     settings=RunSettings(fuzz_examples=0), cases=None if cases is None else tuple(sorted(cases)))


def _refused_endpoint() -> str:
    """The address of a loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def bridge_run(fault: str | None, profile: str, cases: set[str] | None = None, checks: Iterable[str] = ()) -> Run:
    """The vscodelm cases (or only those `cases` names), with every check or only `checks`, against the reference bridge with `fault`, as the embedded
    run starts it; a fault shown only by an agent failure runs the openai agent in front of an endpoint that refuses
    connections."""
    command = embedded_bridge((fault,) if fault else (), profile)
    if fault and BRIDGE_FAULTS[fault].needs_failing_agent:
        command += ("--agent", "openai", "--endpoint", _refused_endpoint(), "--model", "m")
    return run_suite(Target(base_url="", bridge_command=command, bridge_profile=profile, read_timeout=10),
                     apis=("vscodelm",), include=checks, cases=None if cases is None else tuple(sorted(cases)))


_SERVER: ReferenceServer | None = None


def _server_row(fault: str) -> tuple[str, Row]:
    """One fault's row, in a worker process with a reference server of its own."""
    global _SERVER
    if _SERVER is None:
        # A run stops reading a stream at the body cap, and the server's next writes fail: expected, not a line each.
        logging.getLogger("asyncio").setLevel(logging.ERROR)
        _SERVER = ReferenceServer().start()
    run = server_run(_SERVER.base_url, fault)
    proxy = proxy_run(_SERVER.base_url, fault) if fault in differential_faults() else None
    if proxy is None:
        return fault, Row(frozenset(findings_of(run)), shown_by=frozenset(first_shown_on(run)))
    return fault, Row(frozenset(findings_of(run)), frozenset(findings_of(proxy)),
                      shown_by=frozenset(first_shown_on(run) | first_shown_on(proxy)))


def _bridge_row(fault: str) -> tuple[str, Row]:
    strict, symposium = (bridge_run(fault, profile) for profile in BRIDGE_PROFILES)
    found = findings_of(strict)
    in_symposium = findings_of(symposium)
    return fault, Row(frozenset(found), symposium_findings=None if in_symposium == found else frozenset(in_symposium),
                      shown_by=frozenset(first_shown_on(strict) | first_shown_on(symposium)))


def build(workers: int) -> Table:
    """Every row, from its runs: the server's faults in `workers` processes, the bridge's in threads (they wait on
    the bridge's processes far more than they compute)."""
    with ProcessPoolExecutor(workers) as pool:
        server = dict(pool.map(_server_row, catalogue_order()))
    with ThreadPoolExecutor(6) as pool:
        bridge = dict(pool.map(_bridge_row, BRIDGE_FAULTS))
    return Table(server, bridge)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.catalogue", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="processes that run the faults")
    args = parser.parse_args(argv)
    before = load() if CATALOGUE.is_file() else Table({}, {})
    table = build(args.workers)
    write_text_atomically(CATALOGUE, dumps(table))
    changed = [name for name in {**table.server, **table.bridge} if table.row(name) != before.row(name)]
    print(f"{CATALOGUE.relative_to(ROOT)}: {len(table.server)} server faults, {len(table.bridge)} bridge faults"
          f"{'; changed: ' + ', '.join(changed) if changed else ', unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
