"""The coding agents' lines of the headline: graded by what the agent did when it was run (live), or predicted from
its profile when it was not.

A live line reads the agent checks of its case (`<api>/agent-<name>`): it breaks when the agent did not do its job
(no answer quoting the file, the tool not run with the arguments sent, an error shown, a loop, no end), works with
limits when it did but a request was refused and worked round or retried (each limit named, with what the agent did
instead), and works otherwise. The known cause of what broke or limited it is looked for among every finding of its
case, the wire checks on the requests it sent included; the line also says when its profile predicted otherwise.
"""

from __future__ import annotations

from collections import Counter

from lmconform.surfaces import client_line
from lmconform.verdicts.grades import (
    BREAKING,
    Line,
    cause_and_way_round,
    expected_words,
    fragment,
    judged_rows,
    offered_cases,
    reason_of,
    worst_finding,
)
from lmconform.verdicts.profiles import Prediction, Profile, agent_profiles, predict
from lmconform.verdicts.records import CaseResult
from lmconform.vocabulary import BREAKS, LIMITED, NOT_OFFERED, WORKS, Outcome

ACCEPTED = "agent.request.accepted"  # a refusal: a limit when the agent worked round it, the cause when it did not
CASE_PREFIX = "agent-"  # an agent's case is `<api>/agent-<its name>` (docs/architecture.md, adding a coding agent)
RETRIED = " retried: "  # how the agent checks note a retry the agent said it made
# An agent's further tasks, by how their case's name ends after the agent's: each is a line of its own, named apart
# from the agent's ordinary task (a report's matrix keys its rows by the line's words).
TASK_WORDS = {"-overflow": "its file past the context", "-claude-id": "asked for a claude-* model id"}


def agent_name(case: str) -> str:
    return case.partition("/")[2].removeprefix(CASE_PREFIX)


def agent_lines(rows: list[CaseResult], stable: bool) -> tuple[Line, ...]:
    """A line per agent run live, then one per agent of a profile that was not, predicted, for an API the run
    judged and the target offers."""
    live: dict[str, list[CaseResult]] = {}
    for row in rows:
        if row.agent:
            live.setdefault(row.case, []).append(row)
    others = [row for row in rows if not row.agent and row.kind != "agent"]
    profiles = agent_profiles()
    lines = [live_line(agent_name(case), live[case], others, stable, profiles.get(agent_name(case)))
             for case in sorted(live)]
    ran = {agent_name(case) for case in live}
    for name, profile in profiles.items():
        api_rows = [row for row in others if row.api == profile.api]
        if name not in ran and offered_cases(judged_rows(api_rows, stable)):
            lines.append(predicted_line(predict(profile, judged_rows(api_rows, stable)), api_rows, stable))
    return tuple(lines)


def task_words(name: str) -> str:
    """What sets an agent's further task apart (`codex-overflow`: its file past the context); "" for its own."""
    return next((words for ending, words in TASK_WORDS.items() if name.endswith(ending)), "")


def live_line(name: str, rows: list[CaseResult], others: list[CaseResult], stable: bool,
              profile: Profile | None) -> Line:
    judged = judged_rows([row for row in rows if row.kind == "agent"], stable)
    label, api = next(row.agent for row in rows if row.agent), rows[0].api
    client = client_line(label, api) + (f", {task_words(name)}" if task_words(name) else "")
    refused = [row for row in judged if row.check == ACCEPTED and row.outcome != Outcome.OK]
    broken = [row for row in judged if row.check != ACCEPTED and row.outcome in BREAKING]
    retried = [line.partition(RETRIED)[2] for row in judged for line in row.lines("Observed:") if RETRIED in line]
    if judged and not offered_cases(judged):
        status = NOT_OFFERED
    else:
        status = BREAKS if broken else LIMITED if refused or retried else WORKS
    # The refusal the agent did not work round is why it broke; else its worst finding.
    worst = refused[0] if broken and refused else worst_finding(judged)
    worst_cases = (worst.case,) if worst is not None and worst.outcome != Outcome.OK else ()
    findings = [row for row in rows if row.outcome != Outcome.OK and row.outcome != Outcome.UNSUPPORTED]
    cause, way_round = cause_and_way_round(refused + broken + findings, name) if status != WORKS else (None, "")
    limits = tuple(reason_of(row, stable) for row in refused) + tuple(f"it retried: {retry}" for retry in retried)
    said = f"refused: {reason_of(worst, stable)}" if broken and refused and worst is not None else ""
    differs = ""
    if profile is not None and status in (WORKS, LIMITED, BREAKS):
        prediction = predict(profile, judged_rows([row for row in others if row.api == api], stable))
        if prediction.grade != status:
            unmeasured = f", {label} not measured" if profile.label != label else ""
            differs = f"{prediction.basis}{unmeasured}: {prediction.grade}; the profile is out of date, or the " \
                      "server does something its matrix never showed"
    return Line(f"agent-{fragment(name)}-{fragment(api)}", client, status,
                len(offered_cases(judged)), 1 if broken else 0, Counter(row.outcome for row in judged), worst,
                worst_cases, len(rows) - len(judged), stable, limits=limits if status == LIMITED else (),
                cause=cause, way_round=way_round, expected=expected_words(broken) if status == BREAKS else "",
                basis="run live", differs=differs, said=said)


def predicted_line(prediction: Prediction, rows: list[CaseResult], stable: bool) -> Line:
    profile = prediction.profile
    judged = judged_rows(rows, stable)
    deciding = [reason for reason in prediction.reasons if reason.effect != "survives"]
    worst = deciding[0].row if deciding else None
    worst_cases = tuple(sorted({reason.row.case for reason in deciding if reason.row.check == worst.check})) \
        if worst is not None else ()
    breaking = [reason.row for reason in deciding if reason.effect == "breaks"]
    limits: list[str] = []
    for reason in deciding:
        named = reason.cause.title if reason.cause else reason.row.title or reason.row.check
        if reason.effect == "limits" and named not in limits:
            limits.append(named)
    cause, way_round = cause_and_way_round([reason.row for reason in deciding if reason.cause], profile.agent)
    expected = expected_words(breaking)
    return Line(f"agent-{fragment(profile.agent)}-{fragment(profile.api)}", client_line(profile.label, profile.api),
                prediction.grade, len(offered_cases(judged)), len({row.case for row in breaking}),
                Counter(row.outcome for row in judged), worst, worst_cases, len(rows) - len(judged), stable,
                limits=tuple(limits) if prediction.grade == LIMITED else (), cause=cause, way_round=way_round,
                expected=expected if prediction.grade == BREAKS else "", basis=prediction.basis,
                unmeasured=prediction.unmeasured)
