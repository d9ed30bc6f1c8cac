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
from lmconform.cases import Case
from lmconform.checks.evaluate import Verdict, evaluate
from lmconform.checks.observed import Observed
from lmconform.checks.registry import Check
from lmconform.target import Target
from lmconform.wire.capture import send


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
    def __init__(self, target: Target) -> None:
        self.target = target
        self.started = datetime.now(timezone.utc)
        self._clock = time.monotonic()
        self._observed: dict[str, Observed] = {}
        self.verdicts: list[Verdict] = []

    def observe(self, case: Case) -> Observed:
        if case.id not in self._observed:
            exchange = send(self.target, case.method, case.path, case.body_for(self.target.model), case.raw_body)
            self._observed[case.id] = Observed(case, self.target, exchange)
        return self._observed[case.id]

    def judge(self, case: Case, check: Check) -> Verdict | None:
        verdict = evaluate(check, self.observe(case))
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
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(document, stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


SUITE_APIS = ("chat", "models")


def run_suite(target: Target, apis: tuple[str, ...] = SUITE_APIS, include=(), exclude=()) -> Run:
    """Every case of `apis` x every selected check that applies: what `pytest suites` does, without pytest."""
    from lmconform.cases import load_cases
    from lmconform.checks import select

    run = Run(discover(target))
    checks = select(include, exclude)
    for api in apis:
        for case in load_cases(api):
            for check in checks:
                if check.applies(case):
                    run.judge(case, check)
    return run
