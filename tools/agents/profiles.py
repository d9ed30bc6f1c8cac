"""The coding agents' profiles (lmconform/verdicts/profiles.toml), from the fault × agent matrix that docs/agents.md
publishes and the fault × check table (fixtures/catalogue.toml): for each agent, its grade against each defect, and
the effect of each check's finding on it — the mildest grade the agent got against a defect whose findings include
that check. Both inputs are committed, so the profiles follow from them without running an agent: `make
agents-matrix` writes them with the page, and `make check` holds the committed file to what the page and table give.

The page's "Predicted and live" part says, per agent, how the profile's prediction for each defect (from that defect's
findings alone) compares with what the agent did.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from datetime import date
from functools import cache
from pathlib import Path

from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent
from lmconform.cases import load_cases
from lmconform.checks.registry import REGISTRY
from lmconform.files import write_text_atomically
from lmconform.run import applies
from lmconform.run.agent_matrix import CLEAN_OVERFLOW, OVER_SOCKET
from lmconform.verdicts.causes import known_causes
from lmconform.verdicts.profiles import (
    EFFECT_GRADE,
    FILE,
    GRADE_EFFECT,
    GRADE_ORDER,
    Profile,
    predicted_from_findings,
)
from tools.agents.matrix import CLEAN, published_lines
from tools.catalogue import Table

START, END = "<!-- predicted-and-live: start -->", "<!-- predicted-and-live: end -->"
CAUSES_START, CAUSES_END = "<!-- known-causes: start -->", "<!-- known-causes: end -->"
EFFECT_WORDS = {"breaks": "breaks", "limits": "works with limits", "survives": "works"}
DID = {"works": "worked", "works with limits": "worked with limits", "breaks": "broke"}
HEADER = """# The coding agents' profiles: what each agent did against each defect of the reference server's catalogue (its
# fault × agent matrix, docs/agents.md), and the effect of each check's finding on it, the mildest grade it got
# against a defect whose findings include that check (lmconform/verdicts/profiles.py reads them). Written by
# `make agents-matrix` from that matrix and the fault × check table (fixtures/catalogue.toml); not edited by hand.
"""


@cache
def api_checks(api: str) -> frozenset[str]:
    """The checks that judge some case of `api`: the findings of a defect an agent of that API can meet."""
    cases = load_cases(api)
    return frozenset(check.id for check in REGISTRY.values()
                     if check.kind != "agent" and any(applies(check, case) for case in cases))


def published_grades(page: str) -> dict[str, dict[str | None, str | None]]:
    """Each agent's grade against each server of the page's matrix (None: the clean server), by the agent's name;
    None for a race."""
    titles = {agent.title: name for name, agent in AGENTS.items()}
    grades: dict[str, dict[str | None, str | None]] = {}
    for title, lines in published_lines(page).items():
        grades[titles[title]] = {}
        for server, line in lines.items():
            # The overflow task's baseline has no defect, and the rows of the agent in its WebSocket mode are not the
            # agent as it is run by default, which its profile predicts: no grade a profile keeps.
            if server == CLEAN_OVERFLOW or (server or "").endswith(OVER_SOCKET):
                continue
            cell = line.strip("|").split(" | ")[1].strip()
            said = cell.partition(" ")[2]
            grades[titles[title]][server] = said if said in GRADE_ORDER else None
    return grades


def findings_for(agent: Agent, fault: str | None, table: Table) -> frozenset[str]:
    return frozenset() if fault is None else table.server[fault].findings & api_checks(agent.api)


def profile_of(agent: Agent, version: str, grades: dict[str | None, str | None], table: Table,
               measured: str) -> Profile:
    effects: dict[str, str] = {}
    for fault, grade in grades.items():
        if grade is None:
            continue
        for check in findings_for(agent, fault, table):
            effects[check] = min(effects.get(check, grade), grade, key=GRADE_ORDER.index)
    faults = {fault or CLEAN: grade for fault, grade in grades.items() if grade is not None}
    return Profile(agent.name, agent.title, version, agent.api, measured, faults,
                   {check: GRADE_EFFECT[grade] for check, grade in sorted(effects.items())})


def profiles_of(page: str, table: Table, versions: dict[str, str], measured: dict[str, str]) -> list[Profile]:
    """Each agent's profile from `page`'s matrix; `measured`: the date each was measured on (today's, for one the
    matrix was just made for)."""
    return [profile_of(AGENTS[name], versions[name], grades, table, measured.get(name) or date.today().isoformat())
            for name, grades in published_grades(page).items()]


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profiles_text(profiles: Iterable[Profile]) -> str:
    parts = [HEADER]
    for profile in profiles:
        measured_as = AGENTS[profile.agent].measured_as
        parts += [f"[{profile.agent}]", f"title = {_quoted(profile.title)}", f"version = {_quoted(profile.version)}",
                  f"api = {_quoted(profile.api)}", f"measured = {_quoted(profile.measured)}",
                  *([f"measured_as = {_quoted(measured_as)}"] if measured_as else []), "",
                  f"[{profile.agent}.faults]",
                  *(f"{_quoted(fault)} = {_quoted(grade)}" for fault, grade in profile.faults.items()), "",
                  f"[{profile.agent}.checks]",
                  *(f"{_quoted(check)} = {_quoted(effect)}" for check, effect in profile.checks.items()), ""]
    return "\n".join(parts)


def write_profiles(page_path: Path, table: Table, versions: dict[str, str]) -> None:
    """The profiles of the matrix the page at `page_path` has just been written with, dated today, and the page's
    comparison of their predictions with what the agents did."""
    profiles = profiles_of(page_path.read_text(), table, versions, {})
    write_text_atomically(FILE, profiles_text(profiles))
    write_text_atomically(page_path, page_with_comparison(page_path.read_text(), profiles, table))


def committed_measured_dates() -> dict[str, str]:
    """The date each committed profile was measured on."""
    try:
        data = tomllib.loads(FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: str(entry.get("measured", "")) for name, entry in data.items()}


# --- predicted and live ------------------------------------------------------------------------------------------

def differences(profile: Profile, table: Table) -> list[tuple[str, str, str]]:
    """(defect, predicted, what the agent did) for each defect of the matrix where the profile's prediction from the
    defect's findings is not what the agent did."""
    agent = AGENTS[profile.agent]
    found = []
    for fault, grade in profile.faults.items():
        predicted = predicted_from_findings(profile, findings_for(agent, None if fault == CLEAN else fault, table))
        # A known cause that this defect shows (tests/test_causes.py holds it to that) says what it does to the agent
        # from the findings' words, which a check's id alone does not carry.
        said = [EFFECT_GRADE[cause.clients[agent.name].effect] for cause in known_causes()
                if cause.shown_by.get("fault") == fault and agent.name in cause.clients]
        predicted = max([predicted, *said], key=GRADE_ORDER.index)
        if predicted != grade:
            found.append((fault, predicted, grade))
    return found


def comparison(profiles: Iterable[Profile], table: Table) -> str:
    """The page's "Predicted and live" part: per agent, how many defects its prediction gets right, and each it
    does not."""
    lines = [START, ""]
    for profile in profiles:
        wrong = differences(profile, table)
        lines.append(f"- **{profile.label}**: the prediction agrees with what it did on "
                     f"{len(profile.faults) - len(wrong)} of {len(profile.faults)} servers"
                     + (":" if wrong else "."))
        lines += [f"  - `{fault}`: predicted {predicted}; it {DID[grade]}" for fault, predicted, grade in wrong]
    lines += ["", END]
    return "\n".join(lines)


def causes_section() -> str:
    """The page's list of known causes (lmconform/verdicts/causes.toml), as a reader wants them: per cause, what
    happens, what it does to each client and the way round, and where it was seen."""
    lines = [CAUSES_START, ""]
    for cause in known_causes():
        expected = " A known limit of LM Studio's dialect: expected of it." if cause.expected_of else ""
        lines.append(f"- **{cause.title}** (`{cause.id}`). {cause.cause}{expected} Seen: {cause.verified}, "
                     f"{cause.date} ([source]({cause.reference})).")
        lines += [f"  - {AGENTS[name].title if name in AGENTS else name}: {EFFECT_WORDS[effect.effect]}; way round: "
                  f"{effect.way_round}" + (f"; proven: run with {_shown(effect.environment)} against the fault, it does "
                                           "its task (tests/test_causes.py)" if effect.environment else "")
                  for name, effect in cause.clients.items()]
    lines += ["", CAUSES_END]
    return "\n".join(lines)


def _shown(environment: dict[str, str]) -> str:
    return " ".join(f"`{name}={value}`" for name, value in environment.items())


def _replaced(page: str, start: str, end: str, part: str) -> str:
    before, found, rest = page.partition(start)
    _, ended, after = rest.partition(end)
    if not found or not ended:
        raise ValueError(f"the page has no {start} … {end} part to write into")
    return before + part + after


def page_with_comparison(page: str, profiles: list[Profile], table: Table) -> str:
    """`page` with its predicted-and-live part and its list of known causes written anew."""
    return _replaced(_replaced(page, START, END, comparison(profiles, table)), CAUSES_START, CAUSES_END,
                     causes_section())

