"""Running one check on one observation, and the verdict it gives, in the words users read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lmconform.checks.observed import AnyObserved
from lmconform.checks.registry import Check
from lmconform.verdicts.causes import SOURCE as CAUSES
from lmconform.vocabulary import FINDING_OUTCOME, Failure, Grade, NotApplicable, Note, NoVerdict, Outcome, Unsupported
from lmconform.wire.exchange import BROKEN, NOT_JSON, Exchange
from lmconform.wire.http import HttpExchange
from lmconform.wire.redact import redact_text

MAX_FAILURES_SHOWN = 5
# How a process a case talks to can be lost: checks that judge exactly this are given the case all the same.
LOST_PROCESS = frozenset({"exited", "timeout"})


@dataclass(frozen=True)
class Verdict:
    case_id: str
    check: Check
    outcome: Outcome
    failures: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()
    expected: dict | None = None  # the known-failure entry this verdict was expected to match, if any
    repetitions: tuple[int, int] | None = None  # (passed, sent) with --repeat: pass^k over non-deterministic answers
    detail: str = ""  # the reason for ERROR / UNSUPPORTED
    curl: str = ""
    example: str = ""  # for a generated case: the example judged, and the requests that replay it
    agent: str = ""  # for a case of a coding agent: the agent and its version, `Claude Code 2.1.332`
    grade: Grade | None = None  # for a check that grades what the target did with a schema keyword or a tool type
    secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def headline(self) -> str:
        return f"[{self.check.id}] {self.check.title}"

    @property
    def known_limit(self) -> bool:
        """Whether the verdict is expected of the target because a known cause documents it of its dialect."""
        return self.expected is not None and str(self.expected.get("file", "")).startswith(CAUSES)

    @property
    def message(self) -> str:
        lines = [self.headline, f"Level: {self.check.level}   Outcome: {self.outcome}   Case: {self.case_id}"]
        if self.detail:
            lines.append(f"{self.outcome}: {self.detail}")
        lines += [f"Observed: {note}" for note in self.notes]
        if self.repetitions:
            lines.append(f"pass^k: held in {self.repetitions[0]} of {self.repetitions[1]} repetitions of the request")
        for failure in self.failures[:MAX_FAILURES_SHOWN]:
            lines.append(f"Expected: {failure.expected}")
            lines.append(f"Actual:   {failure.actual}")
            if failure.evidence:
                lines.append(f"Event:    {failure.evidence}")
        if len(self.failures) > MAX_FAILURES_SHOWN:
            lines.append(f"… and {len(self.failures) - MAX_FAILURES_SHOWN} more")
        if self.outcome is not Outcome.OK and self.example:
            lines.append(f"Example:  {self.example}")
        if self.outcome is not Outcome.OK and self.curl:
            lines += [f"Reproduce: {command}" for command in self.curl.splitlines()]
        lines.append(f"Reference: {self.check.ref}")
        return redact_text("\n".join(lines), self.secrets)

    @property
    def evidence(self) -> str:
        shown = [failure.evidence for failure in self.failures if failure.evidence]
        if self.example and self.outcome is not Outcome.OK:
            shown.append(self.example)
        return redact_text("\n".join(shown), self.secrets)

    def record(self) -> dict:
        """The results-record row (docs/results-record.md)."""
        return {
            "case": self.case_id,
            "check": self.check.id,
            "kind": self.check.kind,
            "level": str(self.check.level),
            "outcome": str(self.outcome),
            "title": self.check.title,
            "message": self.message,
            "evidence": self.evidence,
            "curl": redact_text(self.curl, self.secrets),
            **({"expected": self.expected} if self.expected else {}),
            **({"pass_k": f"{self.repetitions[0]}/{self.repetitions[1]}"} if self.repetitions else {}),
            **({"agent": self.agent} if self.agent else {}),
            **({self.grade.matrix: {"family": self.grade.family, "grade": self.grade.grade,
                                    "evidence": redact_text(self.grade.evidence, self.secrets)}} if self.grade else {}),
        }


def evaluate(check: Check, observed: AnyObserved) -> Verdict | None:
    """The verdict of `check` on `observed`, or None when the check has nothing to judge in this answer."""
    exchange = observed.exchange
    # What every verdict on the observation says, whatever its outcome.
    common = Verdict(case_id=observed.case.id, check=check, outcome=Outcome.OK, curl=observed.reproduction(),
                     secrets=observed.secrets, example=observed.example,
                     agent=observed.agent_run.label if observed.agent_run else "")
    if observed.unsupported:
        return replace(common, outcome=Outcome.UNSUPPORTED, detail=observed.unsupported)
    judges_run = check.kind == "agent"  # an agent's coping with a failed or cut answer is what it judges
    failed = _no_answer(observed)
    if failed is not None and not judges_run and not (check.judges_lost_process and failed.error_kind in LOST_PROCESS) \
            and not (check.judges_broken_answers and failed.error_kind == BROKEN):
        return replace(common, outcome=Outcome.ERROR, detail=failed.error or "")
    if observed.feature_missing:
        detail = f"the target has no {observed.case.feature} route ({exchange.status_text}: {exchange.body_excerpt(200)})"
        return replace(common, outcome=Outcome.UNSUPPORTED, detail=detail)
    if exchange.truncated and not check.judges_cut_bodies and not judges_run:
        detail = f"the body passed the {exchange.max_body_bytes} byte cap and was cut off; nothing after it was read"
        return replace(common, outcome=Outcome.ERROR, detail=detail)
    try:
        found = check.run(observed)
    except NotApplicable:
        return None
    except Unsupported as reason:
        return replace(common, outcome=Outcome.UNSUPPORTED, detail=str(reason))
    except NoVerdict as reason:
        return replace(common, outcome=Outcome.ERROR, detail=str(reason))
    except Exception as error:  # a check must never take the run down; a crash is a verdict-less ERROR
        return replace(common, outcome=Outcome.ERROR, detail=f"the check crashed: {type(error).__name__}: {error}")
    failures = tuple(item for item in found if isinstance(item, Failure))
    notes = tuple(item.text for item in found if isinstance(item, Note))
    grade = next((item for item in found if isinstance(item, Grade)), None)
    notes += (f"{grade.family}: {grade.grade} ({grade.evidence})",) if grade else ()
    outcome = FINDING_OUTCOME[check.level] if failures else Outcome.OK
    cut = _cut_at_length(exchange) if failures and isinstance(exchange, HttpExchange) else None
    notes += (cut,) if cut else ()
    return replace(common, outcome=outcome, failures=failures, notes=notes, grade=grade)


def _cut_at_length(exchange: HttpExchange) -> str | None:
    """What a user reads beside a finding when the body is exactly as long as its Content-Length says and yet not
    whole (a stream that ends inside an event, a JSON body that stops inside its document): HTTP ends the body there,
    so a Content-Length shorter than the answer cuts it without any error; None otherwise."""
    announced = exchange.headers.get("content-length", "")
    if exchange.error or not announced.isdigit() or int(announced) != len(exchange.body) or not exchange.body:
        return None
    if exchange.is_event_stream:
        if not any(issue.kind == "unterminated_event" for issue in exchange.sse.issues):
            return None
        where = "inside an event"
    elif exchange.content_type == "application/json" and exchange.json is NOT_JSON:
        where = "inside its JSON document"
    else:
        return None
    return (f"the body is the {announced} bytes its Content-Length announced and ends {where}: a Content-Length "
            "shorter than the answer cuts it there, with no error a client can see")


def judged(check: Check, observed: AnyObserved) -> Verdict | None:
    """The verdict of `check` on `observed`, evaluated once however often it is asked for (checks only read)."""
    if check.id not in observed.judged:
        observed.judged[check.id] = evaluate(check, observed)
    return observed.judged[check.id]


def _no_answer(observed: AnyObserved) -> Exchange | None:
    """The exchange that leaves the case without a verdict: its request's, if that failed; over a transport that
    holds the case's conversation (a process), any of them, since what follows a lost process is not the target's
    answer to the case."""
    if observed.exchange.error:
        return observed.exchange
    return next((exchange for exchange in observed.exchanges() if exchange.error and exchange.holds_conversation),
                None)


def worst_of(verdicts: list[Verdict]) -> Verdict:
    """The most severe verdict speaks for a check judged on several answers; it carries how many of them passed."""
    worst = max(verdicts, key=lambda verdict: verdict.outcome.severity)
    passed = sum(verdict.outcome is Outcome.OK for verdict in verdicts)
    return replace(worst, repetitions=(passed, len(verdicts)))
