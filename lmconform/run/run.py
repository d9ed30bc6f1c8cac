"""A run: one target, the cases played against it (each once, or K times with --repeat, or as the examples their
source makes, lmconform.source), and the verdicts given on them, with what the target is known to fail."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import replace
from datetime import UTC, datetime

from lmconform import __version__
from lmconform.cases import Case, load_cases
from lmconform.checks.evaluate import Verdict, judged, worst_of
from lmconform.checks.observed import AnyObserved
from lmconform.checks.registry import REGISTRY, Check
from lmconform.expectations import Expectations
from lmconform.run.exchanges import exchange_text, keeps_exchange, kept_exchanges
from lmconform.run.play import play
from lmconform.run.sources import SOURCES
from lmconform.run.timing import case_timing
from lmconform.settings import RunSettings
from lmconform.source import SourceContext
from lmconform.target import Target
from lmconform.verdicts.causes import cause_of, dialect_of, words_of
from lmconform.vocabulary import Outcome, Requirement
from lmconform.wire.http import over_http, route_missing, send


def run_requirements(target: Target, upstream: Target | None) -> frozenset[Requirement]:
    """What a run against `target` (and `upstream`, if any) offers the checks that require something."""
    return target.profile_requirements | ({Requirement.UPSTREAM} if upstream is not None else frozenset())


def judging(checks: Iterable[Check], case: Case) -> list[Check]:
    """The checks of `checks` that judge `case`, decided from the case alone; for a case a source makes examples
    of, from the source's representatives (examples holding every kind of step it makes). They are made once for
    all the checks: a run's plan asks this of every check for every case."""
    examples = SOURCES[case.source].representatives(case) if case.source else [case]
    return [check for check in checks if any(check.applies(example) for example in examples)]


def applies(check: Check, case: Case) -> bool:
    """Whether `check` judges `case` (judging, for one check)."""
    return bool(judging([check], case))


class TargetUnreachable(Exception):
    """Nothing answers at the target's address, or what accepts the connection never answers: no verdict can be
    reached for any case."""


def discover(target: Target) -> Target:
    """Probe the target once; fill in the model from `/v1/models` when the operator gave none."""
    exchange = send(target, "GET", "/v1/models")
    if exchange.error_kind == "unreachable":
        raise TargetUnreachable(exchange.error)
    if exchange.error_kind == "timeout":
        # Every case would wait as long and end in ERROR: hours at the default read timeout.
        raise TargetUnreachable(f"{target.base_url} accepted the connection but did not answer GET /v1/models "
                                f"({exchange.error}), and would not answer a case either")
    if target.model:
        return target
    data = exchange.json.get("data") if isinstance(exchange.json, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict) and isinstance(data[0].get("id"), str):
        return replace(target, model=data[0]["id"])
    return target


class Run:
    def __init__(self, target: Target, expectations: Expectations | None = None, upstream: Target | None = None,
                 checks: list[Check] | None = None, on_close: Callable[[], None] | None = None,
                 settings: RunSettings = RunSettings()) -> None:
        self.target = target
        self.expectations = expectations
        self.upstream = upstream
        self.settings = settings
        self.checks = checks if checks is not None else list(REGISTRY.values())  # the selected ones
        self._on_close = on_close
        self.started = datetime.now(UTC)
        self._clock = time.monotonic()
        self._examples: dict[str, list[AnyObserved]] = {}
        self._verdicts: dict[tuple[str, str], Verdict | None] = {}
        self._timings: dict[str, dict | None] = {}  # of the cases played as written, their first answer's
        self._ahead: dict[str, Future[list[AnyObserved]]] = {}  # the cases played ahead (play_ahead), by id
        self._ahead_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.verdicts: list[Verdict] = []

    def observe(self, case: Case) -> AnyObserved:
        """The case's (first) answer, played once however many checks judge it."""
        return self.examples(case)[0]

    def examples(self, case: Case) -> list[AnyObserved]:
        """Every answer a case is judged on: the case played as written (once, or as many times as it says; K times
        at the least with --repeat), or the examples its source makes of it (lmconform.source)."""
        if case.id not in self._examples:
            if case.source:
                self._examples[case.id] = SOURCES[case.source].examples(case, self._context(case))
            else:
                self._written(case)
        return self._examples[case.id]

    def _written(self, case: Case) -> list[AnyObserved]:
        ahead = self._ahead.pop(case.id, None)
        plays = ahead.result() if ahead is not None else self._plays(case)
        first = plays[0]
        self._timings[case.id] = case_timing(first)
        self._examples[case.id] = plays  # kept at once: the case may be its own feature's probe
        first.feature_missing = self._feature_missing(case, first)
        for repetition, again in enumerate(plays[1:], start=1):
            again.feature_missing, again.play = first.feature_missing, repetition
        return plays

    def _plays(self, case: Case) -> list[AnyObserved]:
        """The case played as written: once, or as many times as it says (K times at the least with --repeat)."""
        return [play(case, self.target, self.upstream, self.settings)
                for _ in range(max(1, self.settings.repeat, case.plays))]

    def play_ahead(self, cases: Iterable[Case]) -> None:
        """Play `cases` (written ones) in a thread beside the one that judges, in order, before any check asks for
        them: a case that mostly waits for a process (a bridge started for it, its parts paced) then waits while
        the rest of the run computes. A check that asks for one waits for it; `close` lets the case in hand end
        and plays no other."""
        if self._ahead_thread is not None:
            return
        pending: dict[str, Case] = {}  # each once, in the order first given
        for case in cases:
            if not case.source and case.id not in self._examples:
                pending.setdefault(case.id, case)
        if not pending:
            return
        self._ahead = {case_id: Future() for case_id in pending}
        futures = [(case, self._ahead[case_id]) for case_id, case in pending.items()]
        self._ahead_thread = threading.Thread(target=self._play_each, args=(futures,), name="lmconform-play-ahead",
                                              daemon=True)
        self._ahead_thread.start()

    def _play_each(self, futures: list[tuple[Case, Future[list[AnyObserved]]]]) -> None:
        for case, future in futures:
            if self._stopping.is_set():
                future.cancel()
                continue
            try:
                future.set_result(self._plays(case))
            except BaseException as error:  # given to the check that asks for the case, as if it had played it
                future.set_exception(error)

    def _context(self, case: Case) -> SourceContext:
        """What a source is given for `case`: its examples are played as any case is, with whether the target lacks
        the case's feature; they are judged by every check the run could hold the target to, selected or not (what
        a source sends never depends on selection)."""
        feature_missing = self._feature_missing(case)

        def play_example(example: Case) -> AnyObserved:
            observed = play(example, self.target, self.upstream, self.settings)
            observed.feature_missing = feature_missing
            return observed

        available = run_requirements(self.target, self.upstream)
        return SourceContext(self.target, self.upstream, self.settings, play_example, self._written,
                             tuple(check for check in REGISTRY.values() if check.requires <= available))

    def _feature_missing(self, case: Case, observed: AnyObserved | None = None) -> bool:
        """Decided from the feature's first valid case: a 404 to an invalid request is an answer, not a missing route."""
        if not case.feature:
            return False
        if self.target.profile_spec.lacks(case.feature):  # --profile lmstudio@0.3.28: no /v1/responses yet
            return True
        probe = feature_probe(case.api, case.feature)
        if probe is None or probe.id == case.id:
            played = observed or play(case, self.target, settings=self.settings)
            return route_missing(over_http(played.exchange))
        return route_missing(over_http(self.observe(probe).exchange))

    def observations(self) -> dict[str, AnyObserved]:
        """Every case played so far, by case id, with its (first) exchange: for reports that show the exchange."""
        return {case_id: examples[0] for case_id, examples in self._examples.items() if examples}

    def client_verdicts(self, case: Case) -> list[Verdict]:
        """What every selected client check says about the case's answer: judged now if not yet, and recorded as
        any verdict is, so a report shows a finding beside the clients' verdicts on the same bytes."""
        clients = [check for check in self.checks if check.kind == "client"]
        verdicts = [self.judge(case, check) for check in judging(clients, case)]
        return [verdict for verdict in verdicts if verdict is not None]

    @property
    def nothing_to_judge(self) -> int:
        """(case, check) pairs judged so far whose check found nothing to judge in the answer: not verdicts."""
        return sum(verdict is None for verdict in self._verdicts.values())

    def close(self) -> None:
        """End what the run started: the cases played ahead (the one in hand ends, with its process), then the
        embedded reference server."""
        self._stopping.set()
        if self._ahead_thread is not None:
            self._ahead_thread.join()
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
        judge = SOURCES[case.source].judged if case.source else judged
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
        expectations = self.expectations
        known = expectations.for_pair(case.id, check.id) if expectations else None
        if known is not None and expectations is not None:
            return replace(verdict, expected=known.record(expectations.source))
        return self._expected_of_dialect(verdict)

    def _expected_of_dialect(self, verdict: Verdict) -> Verdict:
        """A finding whose known cause is a documented limit of the target's dialect (Codex's tool types on LM
        Studio's Responses API) is expected of it, as a row of a known-failures file would be."""
        if verdict.outcome is Outcome.OK or verdict.outcome is Outcome.UNSUPPORTED:
            return verdict
        cause = cause_of(verdict.check.id, verdict.case_id, words_of(verdict.message, verdict.evidence))
        dialect = dialect_of(self.target.profile, (self.target.fingerprint or {}).get("kind"))
        if cause is None or not cause.expected_of_dialect(dialect):
            return verdict
        return replace(verdict, expected=cause.expected_record(str(verdict.outcome)))

    def timing(self, case_id: str) -> dict | None:
        """When the parts of a written case's (first) answer arrived (lmconform.run.timing); None for a case a source
        makes examples of, or one without an answer over HTTP."""
        return self._timings.get(case_id)

    def exchange_text(self, case_id: str) -> str:
        """A judged case's (first) exchange as the results record keeps it: as text, redacted."""
        observed = self._examples[case_id][0]
        return exchange_text(observed.exchange, observed.secrets)

    def results(self) -> dict:
        """The results record (docs/results-record.md): what reports, matrices and CI gates are built from."""
        kept = {verdict.case_id for verdict in self.verdicts if keeps_exchange(verdict.outcome)}
        return results_record(self.target.header_record(), self.started, time.monotonic() - self._clock,
                              [verdict.record() for verdict in self.verdicts],
                              {case_id: self.exchange_text(case_id) for case_id in kept}, self.nothing_to_judge,
                              {case_id: timing for case_id, timing in self._timings.items() if timing})


def results_record(target: dict, started: datetime, duration_s: float, rows: list[dict],
                   exchanges: dict[str, str] | None = None, nothing_to_judge: int = 0,
                   timings: dict[str, dict] | None = None) -> dict:
    """The results record of a run (docs/results-record.md): its rows in (case, check) order, so that two runs of
    the same verdicts (one process or several) write the same record, the exchanges of the cases it keeps
    (`exchanges`: case id -> text, those of other cases left out), and when each judged case's answer arrived
    (`timings`: case id -> lmconform.run.timing's figures)."""
    with_rows = {row["case"] for row in rows}
    results, curls = shared_curls(sorted(rows, key=lambda row: (row["case"], row["check"])))
    return {
        "lmconform": __version__,
        "target": target,
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_s": round(duration_s, 3),
        "nothing_to_judge": nothing_to_judge,
        "results": results,
        "curls": curls,
        "exchanges": kept_exchanges(rows, exchanges or {}),
        "timing": {case_id: timing for case_id, timing in sorted((timings or {}).items()) if case_id in with_rows},
    }


def shared_curls(rows: list[dict]) -> tuple[list[dict], dict[str, str]]:
    """The rows without the curl they share with the other rows of their case, and that curl once per case id (the
    one most of its rows carry). A curl holds the whole request, and every check of a case replays the same one:
    written on each row, curls were two thirds of a record (5 of 7 MB). A row keeps its own curl when it differs,
    as a generated example's does."""
    carried: dict[str, Counter[str]] = {}
    for row in rows:
        carried.setdefault(row["case"], Counter())[row.get("curl", "")] += 1
    shared = {case: counts.most_common(1)[0][0] for case, counts in carried.items()}
    kept = [{name: value for name, value in row.items() if name != "curl"}
            if row.get("curl", "") == shared[row["case"]] else row for row in rows]
    return kept, {case: curl for case, curl in shared.items() if curl}


def feature_probe(api: str, feature: str) -> Case | None:
    """The case whose answer decides whether a target offers an optional feature (an API it may lack): the first
    valid written case of `api` that names it. A 404 to an invalid request is an answer, not a missing route."""
    return next((case for case in load_cases(api) if case.feature == feature and case.valid and not case.source), None)
