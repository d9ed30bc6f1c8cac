"""The known causes (lmconform/verdicts/causes.toml): each entry is read whole, explains a finding of what it says
shows it (a fault of the reference server, or its clean answer, on a case), is expected of exactly the dialects it
names, and, run against the real agent it names, grades that agent's line as its effect says, with its way round."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmconform.agents import AGENTS
from lmconform.agents.outcome import Limits
from lmconform.agents.runner import run_agent
from lmconform.record.agents import agent_case
from lmconform.run import RunPlan
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.verdicts import causes
from lmconform.verdicts.causes import CauseError, cause_of, known_causes, words_of
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.profiles import EFFECT_GRADE
from lmconform.verdicts.records import results_of
from lmconform.vocabulary import Outcome
from tools.catalogue import server_run

CAUSES = {cause.id: cause for cause in known_causes()}
# Shown by the reference server (a fault of it, or its clean answer), here; by a real server, in its run
# (tests/test_real_targets.py).
ON_THE_REFERENCE_SERVER = {name: cause for name, cause in CAUSES.items() if "server" not in cause.shown_by}
SHOWN_ON_A_CASE = sorted(name for name, cause in ON_THE_REFERENCE_SERVER.items() if "case" in cause.shown_by)
MET_BY_AN_AGENT = sorted((name, cause.shown_by["agent"]) for name, cause in ON_THE_REFERENCE_SERVER.items()
                         if "agent" in cause.shown_by)
# Ways round that are the agent's environment, each run against the fault that shows its cause.
WAYS_ROUND_IN_THE_ENVIRONMENT = sorted((name, client) for name, cause in ON_THE_REFERENCE_SERVER.items()
                                       if "fault" in cause.shown_by
                                       for client, effect in cause.clients.items() if effect.environment)


def test_every_cause_names_what_shows_it_and_what_it_does_to_each_client():
    assert len(CAUSES) >= 4
    for cause in CAUSES.values():
        assert set(cause.shown_by) & {"case", "server"}, f"{cause.id}: shown on no case and no real server"
        assert cause.shown_by.get("agent") in (None, *cause.clients), f"{cause.id}: its agent is not among its clients"
        assert cause.reference.startswith("https://") and cause.verified and cause.date
        for client in cause.clients:
            assert client in AGENTS or client.startswith("client."), f"{cause.id}: {client} is no client"


@pytest.mark.parametrize(("entry", "said"), [
    ({"id": "x", "colour": "red"}, "unknown keys colour"),
    ({"id": "Not An Id"}, "an id is lower-case words"),
    ({"id": "x", "title": "t", "cause": "c", "checks": ["a.*"], "pattern": "("}, "pattern does not compile"),
    ({"id": "x", "title": "t", "cause": "c", "checks": ["a.*"], "pattern": "p", "expected_of": ["vllm"]},
     "expected_of names dialects among lmstudio"),
    ({"id": "x", "title": "t", "cause": "c", "checks": ["a.*"], "pattern": "p", "shown_by": {"fault": "f"},
      "reference": "r", "verified": "v", "clients": {"codex": {"effect": "hangs", "way_round": "w"}}},
     "clients.codex is {effect = one of breaks, limits, survives"),
    ({"id": "x", "title": "t", "cause": "c", "checks": ["a.*"], "pattern": "p", "shown_by": {"fault": "f"},
      "reference": "r", "verified": "v",
      "clients": {"codex": {"effect": "breaks", "way_round": "w", "way_round_environment": {"lower": "1"}}}},
     "clients.codex.way_round_environment is a table of NAME"),
])
def test_an_entry_the_file_gets_wrong_is_refused_saying_where(entry, said):
    with pytest.raises(CauseError, match=said.replace("(", r"\(").replace("{", r"\{")):
        causes._cause(entry, 0)


def test_a_finding_is_matched_on_what_the_server_did_not_on_the_request_that_replays_it():
    message = ("[chat.message.tool_calls_absent_when_empty] t\nActual:   no call\n"
               "Reproduce: curl -d '{\"messages\": [{\"tool_calls\": []}]}'")
    assert cause_of("chat.message.tool_calls_absent_when_empty", "chat/x", words_of(message)) is None
    assert cause_of("chat.message.tool_calls_absent_when_empty", "chat/x",
                    words_of(message, '{"message": {"tool_calls": []}}')).id == "empty-tool-calls-list"


@pytest.mark.parametrize("name", SHOWN_ON_A_CASE)
def test_each_cause_explains_a_finding_of_the_case_and_fault_it_names(server, name):
    cause = CAUSES[name]
    fault, case = cause.shown_by.get("fault"), cause.shown_by["case"]
    run = server_run(server.base_url, fault, (case.partition("/")[0],), {case})
    explained = [verdict for verdict in run.verdicts if verdict.outcome not in (Outcome.OK, Outcome.UNSUPPORTED)
                 and cause_of(verdict.check.id, verdict.case_id, words_of(verdict.message, verdict.evidence)) is cause]
    assert explained, f"{name}: no finding of {case} against {fault or 'the clean server'} has this cause"
    # The reference server speaks LM Studio's dialect: a cause of that dialect is expected of it, any other is not.
    assert {verdict.known_limit for verdict in explained} == {"lmstudio" in cause.expected_of}
    if fault:
        clean = server_run(server.base_url, None, (case.partition("/")[0],), {case})
        assert not [verdict for verdict in clean.verdicts if verdict.outcome is not Outcome.OK
                    and cause_of(verdict.check.id, verdict.case_id, words_of(verdict.message, verdict.evidence))
                    is cause], f"{name}: the clean server shows it too, so {fault} does not produce it"


@pytest.mark.agents
@pytest.mark.parametrize(("name", "agent"), MET_BY_AN_AGENT)
def test_each_cause_an_agent_meets_grades_its_line_as_the_entry_says(server, name, agent):
    cause, api = CAUSES[name], AGENTS[agent].api
    fault = cause.shown_by.get("fault")
    target = Target(base_url=server.base_url + (f"/faults/{fault}" if fault else ""), read_timeout=10)
    plan = RunPlan(target, apis=(api,), settings=RunSettings(agents=(agent,), agent_seconds=60, fuzz_examples=0))
    run = plan.start()
    try:
        for case, check in plan.pairs(api):
            if case.agent is not None:
                run.judge(case, check)
        record = run.results()
    finally:
        run.close()
    line = next(line for line in build_headline(results_of(record, Path("run.json")).results).clients
                if line.key == f"agent-{agent}-{api}")
    effect = cause.clients[agent]
    assert line.status == EFFECT_GRADE[effect.effect], f"{name}: {line.name} {line.status}: {line.why}"
    if effect.effect != "survives":
        assert line.cause is cause and line.way_round == effect.way_round


def test_ways_round_in_the_agent_environment_are_each_proven_live():
    assert ("adaptive-thinking-refused", "claude-code") in WAYS_ROUND_IN_THE_ENVIRONMENT
    for name, client in WAYS_ROUND_IN_THE_ENVIRONMENT:
        assert CAUSES[name].clients[client].effect == "breaks", f"{name}: a way round of an agent that works"


@pytest.mark.agents
@pytest.mark.parametrize(("name", "client"), WAYS_ROUND_IN_THE_ENVIRONMENT)
def test_a_way_round_set_in_the_agent_environment_gets_its_task_done_against_the_fault(server, name, client):
    """The agent's own switch, as the entry gives it, run against the fault that breaks it: its task done, no error
    shown. A documented switch that does not reach the request the server refuses is no way round."""
    cause, agent = CAUSES[name], AGENTS[client]
    task = agent_case(agent).agent
    target = Target(base_url=f"{server.base_url}/faults/{cause.shown_by['fault']}", model="lmconform-reference",
                    read_timeout=10)
    run = run_agent(agent, target, task.task, task.secret, Limits(seconds=60, requests=12),
                    environment=cause.clients[client].environment)
    assert not run.outcome.errors, f"{name}: {run.outcome.errors[0]}"
    assert task.secret in (run.outcome.final_text or ""), f"{name}: {run.ended}, {run.outcome.final_text!r}"
