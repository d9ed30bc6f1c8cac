"""A run: one target, the exchanges of its cases (each sent once), and the verdicts given on them."""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from lmconform import __version__
from lmconform.apis import APIS
from lmconform.cases import Case
from lmconform.checks.evaluate import Verdict, evaluate, worst_of
from lmconform.checks.observed import Observed
from lmconform.checks.registry import Check
from lmconform.expectations import Expectations
from lmconform.target import Target
from lmconform.vocabulary import Requirement
from lmconform.wire.http import HttpExchange, route_missing, send
from lmconform.wire.transport import open_transport


class TargetUnreachable(Exception):
    """Nothing answers at the target's address: no verdict can be reached for any case."""


def discover(target: Target) -> Target:
    """Probe the target once; fill in the model from `/v1/models` when the operator gave none."""
    exchange = send(target, "GET", "/v1/models")
    if exchange.error_kind == "unreachable":
        raise TargetUnreachable(exchange.error)
    if target.model:
        return target
    data = exchange.json.get("data") if isinstance(exchange.json, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict) and isinstance(data[0].get("id"), str):
        return replace(target, model=data[0]["id"])
    return target


class Run:
    def __init__(self, target: Target, expectations: Expectations | None = None, upstream: Target | None = None) -> None:
        self.target = target
        self.expectations = expectations
        self.upstream = upstream
        self.started = datetime.now(timezone.utc)
        self._clock = time.monotonic()
        self._observed: dict[str, Observed] = {}
        self._repeats: dict[str, list[Observed]] = {}
        self.verdicts: list[Verdict] = []

    def observe(self, case: Case) -> Observed:
        if case.id not in self._observed:
            exchange = self._send_case(case)
            observed = Observed(case, self.target, exchange, send=self._send, upstream_target=self.upstream)
            if self.upstream is not None:
                upstream = self.upstream
                upstream_body = case.body_for(upstream.model, upstream.max_tokens, upstream.temperature)
                observed.send_upstream = lambda: send(upstream, case.method, case.path, upstream_body, case.raw_body)
            self._observed[case.id] = observed
            observed.feature_missing = self._feature_missing(case)
        return self._observed[case.id]

    def _feature_missing(self, case: Case) -> bool:
        """Decided from the feature's first valid case: a 404 to an invalid request is an answer, not a missing route."""
        if not case.feature:
            return False
        from lmconform.cases import load_cases

        probe = next((c for c in load_cases(case.api) if c.feature == case.feature and c.valid), case)
        return route_missing(self.observe(probe).exchange)

    def observations(self) -> dict[str, Observed]:
        """Every case sent so far, by case id, with its exchange: for reports that show the full exchange."""
        return dict(self._observed)

    def _send(self, method: str, path: str, body) -> HttpExchange:
        return send(self.target, method, path, body)

    def repetitions(self, case: Case) -> list[Observed]:
        """The case's answers: the first, and with --repeat K the K-1 further ones (sent once, judged by all)."""
        first = self.observe(case)
        if case.id not in self._repeats:
            self._repeats[case.id] = [self._fresh(case) for _ in range(self.target.repeat - 1)]
        return [first, *self._repeats[case.id]]

    def _send_case(self, case: Case) -> HttpExchange:
        body = case.body_for(self.target.model, self.target.max_tokens, self.target.temperature)
        transport = open_transport(self.target)
        try:
            return transport.send(case.method, case.path, body, case.raw_body)
        finally:
            transport.close()

    def _fresh(self, case: Case) -> Observed:
        exchange = self._send_case(case)
        return Observed(case, self.target, exchange, send=self._send, upstream_target=self.upstream,
                        feature_missing=self.observe(case).feature_missing)

    def judge(self, case: Case, check: Check) -> Verdict | None:
        if self.target.repeat > 1:
            verdicts = [v for v in (evaluate(check, o) for o in self.repetitions(case)) if v is not None]
            verdict = worst_of(verdicts) if verdicts else None
        else:
            verdict = evaluate(check, self.observe(case))
        known = self.expectations.for_pair(case.id, check.id) if self.expectations else None
        if verdict is not None and known is not None:
            verdict = replace(verdict, expected=known.record(self.expectations.source))
        if verdict is not None:
            self.verdicts.append(verdict)
        return verdict

    def results(self) -> dict:
        """The results record (INTERFACES.md): what reports, matrices and CI gates are built from."""
        return {
            "lmconform": __version__,
            "target": self.target.header_record(),
            "started": self.started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "duration_s": round(time.monotonic() - self._clock, 3),
            "results": [verdict.record() for verdict in self.verdicts],
        }


def write_json_atomically(path: Path, document: dict) -> None:
    """Write beside the destination and rename, so a crash never leaves a half-written results file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)  # mkstemp's private 0600 is for the temporary name, not the result
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(document, stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def run_suite(target: Target, apis: tuple[str, ...] = tuple(APIS), include=(), exclude=(),
              expectations: Expectations | None = None, upstream: Target | None = None) -> Run:
    """Every case of `apis` x every selected check that applies: what `pytest suites` does, without pytest."""
    from lmconform.cases import load_cases
    from lmconform.checks import select

    run = Run(discover(target), expectations, discover(upstream) if upstream else None)
    checks = select(include, exclude, run_requirements(run.target, run.upstream))
    for api in apis:
        for case in load_cases(api):
            for check in checks:
                if check.applies(case):
                    run.judge(case, check)
    return run


def run_requirements(target: Target, upstream: Target | None) -> frozenset[Requirement]:
    """What a run against `target` (and `upstream`, if any) offers the checks that require something."""
    return target.profile_requirements | ({Requirement.UPSTREAM} if upstream is not None else frozenset())
