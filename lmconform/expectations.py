"""Known failures of a target, kept as data beside its configuration (fixtures/targets/*.toml, or any file
given with --expect), so a CI gate can say "no new failures" and notice a defect that went away.

    label = "llama-cpp-python"
    [[expected]]
    check = "client.void.tool_call_parsed"   # a glob over check ids
    case = "chat/*"                           # a glob over case ids (default: every case)
    outcome = "FAILED"                        # FAILED, NON-STRICT, INFO, UNSUPPORTED or ERROR
    reason = "repeats id and name in every chunk"
    seen = "llama-cpp-python 0.3.36 server"
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

from lmconform.checks.registry import Outcome

NOT_OK = {str(outcome) for outcome in Outcome if outcome is not Outcome.OK}


class ExpectationError(ValueError):
    pass


@dataclass(frozen=True)
class Expected:
    check: str
    case: str
    outcome: str
    reason: str
    seen: str

    def matches(self, case_id: str, check_id: str) -> bool:
        return fnmatch.fnmatchcase(check_id, self.check) and fnmatch.fnmatchcase(case_id, self.case)


@dataclass(frozen=True)
class Expectations:
    source: str
    label: str | None
    entries: tuple[Expected, ...]

    def for_pair(self, case_id: str, check_id: str) -> Expected | None:
        """The first entry naming this (case, check); the file's order decides between overlapping globs."""
        return next((entry for entry in self.entries if entry.matches(case_id, check_id)), None)


def load_expectations(path: Path) -> Expectations:
    try:
        data = tomllib.loads(path.read_text())
    except OSError as error:
        raise ExpectationError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ExpectationError(f"{path}: not TOML: {error}") from None
    entries = []
    for position, entry in enumerate(data.get("expected", [])):
        where = f"{path}: expected[{position}]"
        if not isinstance(entry, dict):
            raise ExpectationError(f"{where} is not a table")
        missing = [key for key in ("check", "outcome", "reason") if not isinstance(entry.get(key), str)]
        if missing:
            raise ExpectationError(f"{where} has no {', '.join(missing)}")
        if entry["outcome"] not in NOT_OK:
            raise ExpectationError(f"{where}: outcome {entry['outcome']!r} is not one of {', '.join(sorted(NOT_OK))}")
        entries.append(Expected(entry["check"], entry.get("case", "*"), entry["outcome"], entry["reason"],
                                entry.get("seen", "")))
    return Expectations(str(path), data.get("label"), tuple(entries))
