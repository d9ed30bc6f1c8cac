"""The words every floor of lmconform shares: how much a rule matters (Level), what a verdict says (Outcome, in
one order of severity, with the symbol and colour every report shows it in), and what a check yields (Failure,
Note) or raises (NotApplicable, Unsupported). Nothing here imports anything of lmconform's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    INFO = "INFO"


class Outcome(StrEnum):
    """In order of severity, mildest first: a check judged several times reports its worst."""

    OK = "OK"
    UNSUPPORTED = "UNSUPPORTED"  # the target lacks the feature the case exercises
    INFO = "INFO"  # an INFO-level check found something worth reporting
    NON_STRICT = "NON-STRICT"  # a SHOULD was broken
    FAILED = "FAILED"  # a MUST was broken
    ERROR = "ERROR"  # no verdict: refused, timed out, crashed

    @property
    def severity(self) -> int:
        return list(Outcome).index(self)

    @property
    def css_class(self) -> str:
        return self.value.lower()


# What a finding of a check at each level turns into.
FINDING_OUTCOME = {Level.MUST: Outcome.FAILED, Level.SHOULD: Outcome.NON_STRICT, Level.INFO: Outcome.INFO}
# Outcomes that are findings about the target, as opposed to a pass or the absence of a verdict.
FINDINGS = frozenset({Outcome.FAILED, Outcome.NON_STRICT, Outcome.INFO})


@dataclass(frozen=True)
class OutcomeStyle:
    """How reports show an outcome: a symbol that reads without colour, a sentence, and two colours."""

    symbol: str
    meaning: str
    background: str
    colour: str


OUTCOME_STYLES = {
    Outcome.OK: OutcomeStyle("✓", "conforms", "#e3f3e6", "#17612b"),
    Outcome.UNSUPPORTED: OutcomeStyle("–", "the target lacks the feature", "#ececec", "#505050"),
    Outcome.INFO: OutcomeStyle("i", "reported only: the spec leaves it open", "#e4edfb", "#17448f"),
    Outcome.NON_STRICT: OutcomeStyle("!", "a SHOULD was broken", "#fff1d6", "#7d4a00"),
    Outcome.FAILED: OutcomeStyle("✗", "a MUST was broken", "#fbe2e2", "#a10f0f"),
    Outcome.ERROR: OutcomeStyle("⚠", "no verdict: refused, timed out or crashed", "#f1e2f5", "#651a7c"),
}
WORST_FIRST = tuple(reversed(Outcome))

# Will it work? The grade of a client or a surface (lmconform.verdicts.grades), in the words of what a user meets.
WORKS, LIMITED, BREAKS, NOT_OFFERED = "works", "works with limits", "breaks", "not offered"
# How a grade is shown: the outcome whose colours it takes, and a symbol that reads without colour.
STATUS_STYLE = {WORKS: (Outcome.OK, "✓"), LIMITED: (Outcome.NON_STRICT, "!"), BREAKS: (Outcome.FAILED, "✗"),
                NOT_OFFERED: (Outcome.UNSUPPORTED, "–")}
STATUS_MEANING = {
    WORKS: "the client did its job; nothing it needs was broken",
    LIMITED: "the client did its job, but something was refused and worked round, retried, or is a known limit of "
             "the target's dialect: each limit is named",
    BREAKS: "the job was not done: a MUST broken, or no verdict, on a case the client or surface needs",
    NOT_OFFERED: "the target lacks the feature",
}
# A stream whose first token and last event are closer than this has no rate in tokens per second in its record
# (a server that writes its answer at once); the run's page says so where the rate is missing.
RATE_MEASURABLE_S = 0.01
# A prompt this long (in words) takes a local server a while to prefill: the silence before its first event, and the
# keep-alives it sends meanwhile, are measured on the cases that send one (responses.stream.silence_within_idle_limit).
LONG_PROMPT_WORDS = 2000


def outcome_css(selector: str) -> str:
    """One rule per outcome for elements of `selector` that also carry the outcome's class (`.cell`, say):
    every report colours outcomes from this one table."""
    return "\n".join(f"{selector}.{outcome.css_class} {{ background: {style.background}; color: {style.colour}; }}"
                     for outcome, style in OUTCOME_STYLES.items())


# What a check judges: the exchange as sent ("wire"), the answer replayed through a real client ("client"), what a
# proxy changed against its upstream ("differential"), or what a coding agent did ("agent": from its run, what it
# showed its user and the exchanges relayed for it, even when an exchange of the run failed, since how the agent copes
# with that is what the check is about).
CHECK_KINDS = ("wire", "client", "differential", "agent")


class Requirement(StrEnum):
    """What a check may need of a run to be part of it at all."""

    UPSTREAM = "upstream"  # --upstream: the same request also sent straight to a proxy's upstream
    LMSTUDIO_PROFILE = "profile:lmstudio"  # the target is held to LM Studio's exact answers (its error bodies)
    REFERENCE_PROFILE = "profile:reference"  # the target is lmconform's deterministic reference server
    BRIDGE_STRICT = "bridge:strict"  # a VS Code language-model bridge that completes a cancelled request
    BRIDGE_SYMPOSIUM = "bridge:symposium"  # one that sends nothing more for it, as Symposium's bridge does


def surface_of(check_id: str) -> str:
    """The surface a check id names (`<surface>.<area>.<property>`): its first part; `client.void` and the other
    client surfaces are surfaces of their own."""
    head, _, rest = check_id.partition(".")
    return f"{head}.{rest.partition('.')[0]}" if head == "client" else head


def shown(value: object) -> str:
    """A value as a message shows it: a string quoted, anything that came as JSON as JSON (`null`, `true`,
    `{"a": [1]}`), so no message reads `None` or a tuple; anything else (a marker of absence) as it names itself."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (int, float, list, tuple, dict, type(None))):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except ValueError:
            pass
    return repr(value)


@dataclass(frozen=True)
class Failure:
    """One way the observation broke the check. `evidence` is the offending raw event or body excerpt."""

    expected: str
    actual: str
    evidence: str = ""


@dataclass(frozen=True)
class Note:
    """What the target did, where the spec leaves a choice: reported beside the verdict, never a finding."""

    text: str


@dataclass(frozen=True)
class Grade:
    """What a server did with one thing a request asks of it, a row of one of the graded matrices, with the evidence
    in a line: a JSON Schema keyword family of its format ("enforced": the answer holds it, "refused": a 4xx,
    "ignored": accepted, and the answer breaks it), a Responses tool type ("honoured", "refused", "dropped"), a field
    a client sends or an optional request parameter ("honoured", "refused", "ignored")."""

    family: str  # what is graded: keywords as a schema writes them ("minimum/maximum"), a tool type, or a field
    grade: str
    evidence: str
    matrix: str = "schema_keyword"  # the results record's key: schema_keyword, tool_type, request_field, parameter


GRADES = ("enforced", "refused", "ignored")


class NotApplicable(Exception):
    """Raised by a check whose subject is absent from this answer (no tool call to judge, say)."""


class Unsupported(Exception):
    """Raised by a check when the target does not offer the feature the case exercises."""


class NoVerdict(Exception):
    """Raised by a check when what it judges never came to an end it can judge (an agent stopped at its time
    limit): an ERROR, with the reason."""
