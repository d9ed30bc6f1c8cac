"""Known failures of a target, kept as data beside its configuration (fixtures/targets/*.toml, or any file
given with --expect), so a CI gate can say "no new failures" and notice a defect that went away.

    label = "llama-cpp-python"
    [[expected]]
    check = "client.void.tool_call_parsed"   # a glob over check ids
    case = "chat/*"                           # a glob over case ids (default: every case)
    outcome = "FAILED"                        # FAILED, NON-STRICT, INFO, UNSUPPORTED or ERROR
    reason = "repeats id and name in every chunk"
    seen = "llama-cpp-python 0.3.36 server"

A row whose verdict depends on which tokens a model picked, not on what the server does with them (arguments cut
at max_tokens, a text answer where a call was hoped for), says so and names every outcome it may take:

    [[expected]]
    check = "generation.tool_call.arguments_json_object"
    case = "chat/recorded-openai-agents-chat-completions-2"
    model_dependent = true
    outcomes = ["OK", "FAILED"]
    reason = "the model may call the tool again and be cut inside its arguments by max_tokens"

Such a row holds while the verdict stays in its set; every other row holds only for its one outcome.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

from lmconform.vocabulary import Outcome

OUTCOMES = {str(outcome) for outcome in Outcome}
NOT_OK = OUTCOMES - {str(Outcome.OK)}
ROW_KEYS = {"check", "case", "outcome", "outcomes", "model_dependent", "reason", "seen"}


class ExpectationError(ValueError):
    pass


@dataclass(frozen=True)
class Expected:
    check: str
    case: str
    outcomes: frozenset[str]  # one for a wire fact; for a model-dependent row, every outcome it may take
    reason: str
    seen: str
    model_dependent: bool = False

    def matches(self, case_id: str, check_id: str) -> bool:
        return fnmatch.fnmatchcase(check_id, self.check) and fnmatch.fnmatchcase(case_id, self.case)

    def allows(self, outcome: str) -> bool:
        return str(outcome) in self.outcomes

    @property
    def shown(self) -> str:
        """The outcomes as a person reads them: `FAILED`, or `OK or FAILED (model-dependent)`."""
        order = [outcome.value for outcome in Outcome]
        names = " or ".join(sorted(self.outcomes, key=order.index))
        return f"{names} (model-dependent)" if self.model_dependent else names

    def record(self, source: str) -> dict:
        """The row as the results record carries it beside a verdict."""
        return {"outcomes": sorted(self.outcomes, key=list(Outcome).index), "model_dependent": self.model_dependent,
                "reason": self.reason, "file": source}


@dataclass(frozen=True)
class Expectations:
    source: str
    label: str | None
    entries: tuple[Expected, ...]

    def for_pair(self, case_id: str, check_id: str) -> Expected | None:
        """The first entry naming this (case, check); the file's order decides between overlapping globs."""
        return next((entry for entry in self.entries if entry.matches(case_id, check_id)), None)


def _row(entry: object, where: str) -> Expected:
    if not isinstance(entry, dict):
        raise ExpectationError(f"{where} is not a table")
    unknown = set(entry) - ROW_KEYS
    if unknown:
        raise ExpectationError(f"{where} has unknown keys {', '.join(sorted(unknown))}")
    model_dependent = entry.get("model_dependent", False)
    if not isinstance(model_dependent, bool):
        raise ExpectationError(f"{where}: model_dependent is true or false")
    required = ("check", "reason") if model_dependent else ("check", "outcome", "reason")
    missing = [key for key in required if not isinstance(entry.get(key), str)]
    if missing:
        raise ExpectationError(f"{where} has no {', '.join(missing)}")
    if model_dependent:
        outcomes = entry.get("outcomes")
        if "outcome" in entry or not isinstance(outcomes, list) or not outcomes \
                or not all(isinstance(outcome, str) for outcome in outcomes):
            raise ExpectationError(f"{where}: a model-dependent row names its outcomes = [...], not one outcome")
        allowed, wrong = OUTCOMES, set(outcomes) - OUTCOMES
    else:
        if "outcomes" in entry:
            raise ExpectationError(f"{where}: only a model-dependent row (model_dependent = true) may allow several "
                                   f"outcomes; a wire fact has one outcome")
        outcomes = [entry.get("outcome")]
        allowed, wrong = NOT_OK, {outcome for outcome in outcomes if outcome not in NOT_OK}
    if wrong:
        raise ExpectationError(f"{where}: outcome {', '.join(map(repr, sorted(wrong, key=str)))} is not one of "
                               f"{', '.join(sorted(allowed))}")
    if set(outcomes) == OUTCOMES:
        raise ExpectationError(f"{where} allows every outcome, which tests nothing")
    return Expected(entry["check"], entry.get("case", "*"), frozenset(outcomes), entry["reason"], entry.get("seen", ""),
                    model_dependent)


def load_expectations(path: Path) -> Expectations:
    try:
        data = tomllib.loads(path.read_text())
    except OSError as error:
        raise ExpectationError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ExpectationError(f"{path}: not TOML: {error}") from None
    entries = tuple(_row(entry, f"{path}: expected[{position}]")
                    for position, entry in enumerate(data.get("expected", [])))
    return Expectations(str(path), data.get("label"), entries)
