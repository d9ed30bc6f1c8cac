"""A run: one target, the cases played against it (each once, or K times with --repeat, or as the examples of a
generated source), and the verdicts given on them, with what the target is known to fail."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from lmconform import __version__
from lmconform.cases import Case, load_cases
from lmconform.cases.writer import save_finding
from lmconform.checks.evaluate import Verdict, evaluate, worst_of
from lmconform.checks.observed import Observed
from lmconform.checks.registry import REGISTRY, Check
from lmconform.expectations import Expectations
from lmconform.fuzz import SOURCES, streams
from lmconform.normalize.vscodelm import CHAT_INFORMATION
from lmconform.run.play import play
from lmconform.target import Target
from lmconform.vocabulary import Outcome, Requirement
from lmconform.wire.http import route_missing, send
from lmconform.wire.stdio import StdioTransport

# What a search of generated cases shrinks towards: a finding at these outcomes.
SHRUNK_OUTCOMES = frozenset({Outcome.FAILED, Outcome.NON_STRICT})


def applies(check: Check, case: Case) -> bool:
    """Whether `check` judges `case`, decided from the case alone; for a source of generated cases, from an example
    holding every kind of step it can generate."""
    if case.source == streams.SOURCE:
        return check.applies(streams.representative(case))
    if case.source:
        return any(check.applies(example) for example in SOURCES[case.source].representatives(case))
    return check.applies(case)


def judged(check: Check, observed: Observed) -> Verdict | None:
    """The verdict of `check` on `observed`, evaluated once however often it is asked for (checks only read)."""
    if check.id not in observed.judged:
        observed.judged[check.id] = evaluate(check, observed)
    return observed.judged[check.id]


class _FindingOf:
    """Whether a generated example has a finding: judged by every check that applies, selected or not (what a search
    sends never depends on selection). Once one has, shrinking looks for the same finding only: the checks that
    failed first, which keeps each step of shrinking cheap and the shrunk example about the same defect."""

    def __init__(self) -> None:
        self.checks = [check for check in REGISTRY.values() if not check.requires]

    def __call__(self, observed: Observed) -> bool:
        failing = [check for check in self.checks if check.applies(observed.case)
                   and (verdict := judged(check, observed)) is not None and verdict.outcome in SHRUNK_OUTCOMES]
        if failing and len(failing) < len(self.checks):
            self.checks = failing
        return bool(failing)


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


def discover_bridge(target: Target) -> Target:
    """Start the bridge once and ask for its models; the first one's id is the `modelId` cases send. A bridge that
    cannot be started at all is unreachable; one that answers badly is left for the cases to judge."""
    if target.bridge_model:
        return target
    transport = StdioTransport(target)
    try:
        exchange = transport.send(CHAT_INFORMATION, None, {"silent": True})
    finally:
        transport.close()
    if exchange.error_kind == "unreachable":
        raise TargetUnreachable(exchange.error)
    result = exchange.response.value.get("result") if exchange.response is not None else None
    models = result.get("models") if isinstance(result, dict) else None
    first = models[0] if isinstance(models, list) and models and isinstance(models[0], dict) else {}
    return replace(target, bridge_model=first["id"]) if isinstance(first.get("id"), str) and first["id"] else target


class Run:
    def __init__(self, target: Target, expectations: Expectations | None = None, upstream: Target | None = None,
                 checks: list[Check] | None = None, on_close: Callable[[], None] | None = None) -> None:
        self.target = target
        self.expectations = expectations
        self.upstream = upstream
        self.checks = checks if checks is not None else list(REGISTRY.values())  # the selected ones
        self._on_close = on_close
        self.started = datetime.now(timezone.utc)
        self._clock = time.monotonic()
        self._examples: dict[str, list[Observed]] = {}
        self._verdicts: dict[tuple[str, str], Verdict | None] = {}
        self.verdicts: list[Verdict] = []

    def observe(self, case: Case) -> Observed:
        """The case's (first) answer, played once however many checks judge it."""
        return self.examples(case)[0]

    def examples(self, case: Case) -> list[Observed]:
        """Every answer a case is judged on: one; K with --repeat K; a source's generated examples. A streams source
        sends none without --upstream-fuzz: it is then its own plain request, played as any case."""
        if case.id not in self._examples:
            if case.source == streams.SOURCE and self.target.stream_examples:
                self._examples[case.id] = self._stream_searched(case)
            elif case.source and case.source != streams.SOURCE:
                self._examples[case.id] = self._searched(case)
            else:
                first = play(case, self.target, self.upstream)
                self._examples[case.id] = [first]  # kept at once: the case may be its own feature's probe
                first.feature_missing = self._feature_missing(case, first)
                for repetition in range(1, self.target.repeat):
                    again = play(case, self.target, self.upstream)
                    again.feature_missing, again.play = first.feature_missing, repetition
                    self._examples[case.id].append(again)
        return self._examples[case.id]

    def _feature_missing(self, case: Case, observed: Observed | None = None) -> bool:
        """Decided from the feature's first valid case: a 404 to an invalid request is an answer, not a missing route."""
        if not case.feature:
            return False
        if self.target.profile_spec.lacks(case.feature):  # --profile lmstudio@0.3.28: no /v1/responses yet
            return True
        probe = next((c for c in load_cases(case.api) if c.feature == case.feature and c.valid and not c.source),
                     None)
        if probe is None or probe.id == case.id:
            return route_missing(observed.exchange if observed else play(case, self.target).exchange)
        return route_missing(self.observe(probe).exchange)

    def _searched(self, case: Case) -> list[Observed]:
        """A source's examples, when the run plays that source: those that kept every invariant, and the shrunk one
        that did not (a source that makes its own examples, a coding agent's requests, has no finding to shrink)."""
        source = SOURCES[case.source]
        if not source.plays(case, self.target):
            return []
        feature_missing = self._feature_missing(case)

        def play_example(example: Case) -> Observed:
            observed = play(example, self.target, self.upstream)
            observed.feature_missing = feature_missing
            observed.example = source.describe(observed)
            return observed

        found = source.search(case, play_example, _FindingOf(), self.target)
        if found.finding is not None and self.target.fuzz_save:
            saved = save_finding(found.finding.case, Path(self.target.fuzz_save))
            found.finding.example += f"\nSaved as the case {saved}" if saved else f"\nNot saved under {self.target.fuzz_save}"
            found.finding.judged.clear()  # judged again when asked, with where it was saved
        examples = [*found.kept, *([found.finding] if found.finding else [])]
        for observed in examples:
            observed.feature_missing = feature_missing
        return examples

    def _stream_searched(self, case: Case) -> list[Observed]:
        """A streams source's examples through the target (a proxy) and straight to the upstream: those without a
        finding, and each finding shrunk to the smallest form that still has it."""
        feature_missing = self._feature_missing(case)

        def play_example(example: Case) -> Observed:
            observed = play(example, self.target, self.upstream)
            observed.feature_missing = feature_missing
            observed.example = streams.describe(observed)
            return observed

        # Judged by every check the run could hold the target to, selected or not, as for chains.
        available = self.target.profile_requirements | ({Requirement.UPSTREAM} if self.upstream else frozenset())
        checks = [check for check in REGISTRY.values() if check.requires <= available]
        found = streams.search(case, play_example, streams.findings_by(checks), self.target.stream_examples,
                               self.target.stream_seed)
        return [*found.kept, *(finding.observed for finding in found.findings)]

    def observations(self) -> dict[str, Observed]:
        """Every case played so far, by case id, with its (first) exchange: for reports that show the exchange."""
        return {case_id: examples[0] for case_id, examples in self._examples.items() if examples}

    def client_verdicts(self, case: Case) -> list[Verdict]:
        """What every selected client check says about the case's answer: judged now if not yet, and recorded as
        any verdict is, so a report shows a finding beside the clients' verdicts on the same bytes."""
        verdicts = [self.judge(case, check) for check in self.checks if check.kind == "client" and applies(check, case)]
        return [verdict for verdict in verdicts if verdict is not None]

    @property
    def nothing_to_judge(self) -> int:
        """(case, check) pairs judged so far whose check found nothing to judge in the answer: not verdicts."""
        return sum(verdict is None for verdict in self._verdicts.values())

    def close(self) -> None:
        """End what the run started (the embedded reference server)."""
        if self._on_close is not None:
            self._on_close()

    def judge(self, case: Case, check: Check) -> Verdict | None:
        """The verdict of `check` on `case`, given once: a later call returns the same verdict."""
        key = (case.id, check.id)
        if key not in self._verdicts:
            self._verdicts[key] = verdict = self._verdict(case, check)
            if verdict is not None:
                self.verdicts.append(verdict)
        return self._verdicts[key]

    def _verdict(self, case: Case, check: Check) -> Verdict | None:
        examples = self.examples(case)
        # An example of generated forms that the upstream's own answer fails too passed through (streams.judged).
        judge = streams.judged if case.source == streams.SOURCE else judged
        # The most severe verdict of each play speaks for it (a source's play has many examples); with --repeat,
        # the plays together are pass^k.
        plays: dict[int, Verdict] = {}
        for observed in examples:
            verdict = judge(check, observed) if check.applies(observed.case) else None
            if verdict is not None and (observed.play not in plays
                                        or verdict.outcome.severity > plays[observed.play].outcome.severity):
                plays[observed.play] = verdict
        if not plays:
            return None
        verdict = worst_of(list(plays.values())) if len(plays) > 1 else next(iter(plays.values()))
        known = self.expectations.for_pair(case.id, check.id) if self.expectations else None
        if known is not None:
            verdict = replace(verdict, expected=known.record(self.expectations.source))
        return verdict

    def results(self) -> dict:
        """The results record (INTERFACES.md): what reports, matrices and CI gates are built from."""
        return results_record(self.target.header_record(), self.started, time.monotonic() - self._clock,
                              [verdict.record() for verdict in self.verdicts])


def results_record(target: dict, started: datetime, duration_s: float, rows: list[dict]) -> dict:
    """The results record of a run: its rows in (case, check) order, so that two runs of the same verdicts (one
    process or several) write the same record."""
    return {
        "lmconform": __version__,
        "target": target,
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_s": round(duration_s, 3),
        "results": sorted(rows, key=lambda row: (row["case"], row["check"])),
    }
