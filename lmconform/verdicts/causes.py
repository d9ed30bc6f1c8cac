"""Known causes: why a client breaks, or works with limits, against a target, and the way round, for the findings
lmconform has seen before. They are data (causes.toml beside this module), one entry per cause:

    [[cause]]
    id = "system-turn-refused"                       # stable, fragment-safe
    title = "a system turn among the messages is refused"
    cause = "…"                                      # one sentence: what the server does and what it costs
    checks = ["agent.request.accepted_as_sent"]      # globs over check ids: the findings it explains
    cases = ["messages/*"]                           # globs over case ids (default: every case)
    pattern = "messages\\.\\d+\\.role"               # a regular expression the finding's words must hold
    expected_of = ["lmstudio"]                       # dialects of which it is a known, documented limit
    reference = "https://…"                          # the public issue or documentation
    verified = "Claude Code 2.1.332 against …"       # where and when it was seen
    date = "2026-11-26"
    shown_by = { fault = "messages-system-turn-refused", agent = "claude-code" }
    [cause.clients.claude-code]                      # each client it affects: an agent's name or a client surface
    effect = "limits"                                # "breaks", "limits" (works with limits) or "survives"
    way_round = "…"                                  # a config line, a flag, a server setting, a version
    way_round_environment = { MAX_THINKING_TOKENS = "0" }  # optional: the way round as the agent's environment,
                                                     # run against what shows the cause, and then it works

A finding of a listed check, on a listed case, whose words match the pattern, has that cause. A dialect named in
`expected_of` ("lmstudio": LM Studio and the reference server, which speaks its dialect) is known to have it: a
finding with such a cause against such a target is expected of it, like a row of a known-failures file, and does
not fail the run. Every entry is proven against what produces it (tests/test_causes.py): a fault of the reference
server, a case, or an agent's run against it.

This module reads only the data, so that the run (which marks what is expected) and the reports (which show the
cause and the way round beside a grade) both stand above it.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

FILE = Path(__file__).resolve().parent / "causes.toml"
SOURCE = "lmconform/verdicts/causes.toml"
EFFECTS = ("breaks", "limits", "survives")  # what a cause does to a client, worst first
DIALECTS = ("lmstudio",)
LMSTUDIO_DIALECT = ("lmstudio", "reference")  # profiles and fingerprints of servers that speak LM Studio's dialect
KEYS = {"id", "title", "cause", "checks", "cases", "pattern", "expected_of", "reference", "verified", "date",
        "shown_by", "clients"}
SHOWN_BY_KEYS = {"fault", "case", "agent", "server"}
CLIENT_KEYS = {"effect", "way_round", "way_round_environment"}


class CauseError(ValueError):
    """The known causes' file is not as this module reads it: a programming error of the package."""


@dataclass(frozen=True)
class ClientEffect:
    effect: str  # one of EFFECTS
    way_round: str
    # Variables that, set in the agent's environment, are the way round: proven by running the agent so against what
    # shows the cause (tests/test_causes.py), because an agent's documented switch may not reach every request.
    environment: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    cause: str
    checks: tuple[str, ...]
    cases: tuple[str, ...]
    pattern: re.Pattern[str]
    expected_of: tuple[str, ...]
    reference: str
    verified: str
    date: str
    shown_by: dict[str, str]
    clients: dict[str, ClientEffect]

    @property
    def source(self) -> str:
        """Where a reader finds the entry: `lmconform/verdicts/causes.toml#system-turn-refused`."""
        return f"{SOURCE}#{self.id}"

    def explains(self, check: str, case: str, words: str) -> bool:
        return (any(fnmatch.fnmatchcase(check, glob) for glob in self.checks)
                and any(fnmatch.fnmatchcase(case, glob) for glob in self.cases)
                and self.pattern.search(words) is not None)

    def expected_of_dialect(self, dialect: str | None) -> bool:
        return dialect is not None and dialect in self.expected_of

    def effect_on(self, client: str) -> ClientEffect | None:
        return self.clients.get(client)

    def expected_record(self, outcome: str) -> dict:
        """The known-failure entry a verdict with this cause carries against a target of a dialect that has it (the
        shape of lmconform.expectations.Expected.record)."""
        return {"outcomes": [outcome], "model_dependent": False, "reason": f"{self.title}: {self.cause}",
                "file": self.source}


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise CauseError(f"{where} is a list of strings")
    return tuple(value)


def _text(entry: dict, key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CauseError(f"{where} has no {key}")
    return value


def _client(name: str, value: object, where: str) -> ClientEffect:
    if not isinstance(value, dict) or not {"effect", "way_round"} <= set(value) <= CLIENT_KEYS \
            or value["effect"] not in EFFECTS or not isinstance(value["way_round"], str) or not value["way_round"].strip():
        raise CauseError(f"{where}: clients.{name} is {{effect = one of {', '.join(EFFECTS)}, way_round = \"…\"}}, "
                         "and way_round_environment = {NAME = \"value\"} if the way round is the agent's environment")
    environment = value.get("way_round_environment", {})
    if not isinstance(environment, dict) or not all(
            re.fullmatch(r"[A-Z][A-Z0-9_]*", key) and isinstance(setting, str) for key, setting in environment.items()):
        raise CauseError(f"{where}: clients.{name}.way_round_environment is a table of NAME = \"value\"")
    return ClientEffect(value["effect"], value["way_round"], dict(environment))


def _cause(entry: object, position: int) -> Cause:
    where = f"{SOURCE}: cause[{position}]"
    if not isinstance(entry, dict):
        raise CauseError(f"{where} is not a table")
    unknown = set(entry) - KEYS
    if unknown:
        raise CauseError(f"{where} has unknown keys {', '.join(sorted(unknown))}")
    identifier = _text(entry, "id", where)
    where = f"{SOURCE}#{identifier}"
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", identifier):
        raise CauseError(f"{where}: an id is lower-case words joined by hyphens")
    try:
        pattern = re.compile(_text(entry, "pattern", where))
    except re.error as error:
        raise CauseError(f"{where}: pattern does not compile: {error}") from None
    expected_of = tuple(entry.get("expected_of", ()))
    if set(expected_of) - set(DIALECTS):
        raise CauseError(f"{where}: expected_of names dialects among {', '.join(DIALECTS)}")
    shown_by = entry.get("shown_by")
    if not isinstance(shown_by, dict) or not shown_by or set(shown_by) - SHOWN_BY_KEYS \
            or not all(isinstance(value, str) for value in shown_by.values()):
        raise CauseError(f"{where}: shown_by is a table of {', '.join(sorted(SHOWN_BY_KEYS))}")
    clients = entry.get("clients")
    if not isinstance(clients, dict) or not clients:
        raise CauseError(f"{where} names no client it affects")
    return Cause(identifier, _text(entry, "title", where), _text(entry, "cause", where),
                 _strings(entry.get("checks"), f"{where}: checks"), _strings(entry.get("cases", ["*"]), f"{where}: cases"),
                 pattern, expected_of, _text(entry, "reference", where), _text(entry, "verified", where),
                 str(entry.get("date", "")), dict(shown_by),
                 {name: _client(name, value, where) for name, value in clients.items()})


@cache
def known_causes() -> tuple[Cause, ...]:
    """Every entry of causes.toml, in the file's order (which decides between causes that both match)."""
    try:
        data = tomllib.loads(FILE.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CauseError(f"{SOURCE}: {error}") from None
    causes = tuple(_cause(entry, position) for position, entry in enumerate(data.get("cause", [])))
    seen: set[str] = set()
    for cause in causes:
        if cause.id in seen:
            raise CauseError(f"{SOURCE}: two causes are called {cause.id!r}")
        seen.add(cause.id)
    return causes


def cause_of(check: str, case: str, words: str) -> Cause | None:
    """The known cause of a finding of `check` on `case` whose message and evidence are `words`, if one explains it."""
    return next((cause for cause in known_causes() if cause.explains(check, case, words)), None)


def words_of(message: str, evidence: str = "") -> str:
    """What a finding says, for a cause's pattern: its message and evidence without the command that replays the
    request (whose body holds what the client sent, not what the server did)."""
    kept = [line for line in message.splitlines() if not line.startswith(("Reproduce:", "Reference:"))]
    return "\n".join([*kept, evidence])


def dialect_of(profile: str | None, kind: str | None) -> str | None:
    """The dialect a target speaks, for `expected_of`: LM Studio's for LM Studio and for the reference server (held
    to LM Studio's profile or fingerprinted as either); None for any other."""
    family = (profile or "").partition("@")[0]
    return "lmstudio" if family in LMSTUDIO_DIALECT or kind in LMSTUDIO_DIALECT else None


def cause_by_id(identifier: str) -> Cause | None:
    return next((cause for cause in known_causes() if cause.id == identifier), None)
