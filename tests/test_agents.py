"""Real coding agents in the loop: Claude Code, Codex CLI and opencode, each at its pinned version, run in a sandbox
through lmconform's relay against the reference server's scripted model.

- Each agent does its task on the clean server, and every verdict of its case is what fixtures/agents/reference.toml
  expects: every agent check OK for the agents LM Studio's dialect admits, and for Codex, whose default tools it
  refuses, the refusal itself, from the exchange.
- The fault × agent matrix of docs/agents.md is what the agents do now (tools/agents/matrix.py), and each fault's
  declared agent findings are what its agent shows against it.
- Bad agents: one that hangs is stopped at its limit (ERROR, with its last output) and leaves no process behind; one
  that exits non-zero has its stderr as evidence; one that loops is stopped after its requests; one that is not
  installed is UNSUPPORTED with the reason.
- The relay passes an answer on as it arrives and sends the target's key, never the agent's.

The agents are installed once per machine (`make targets`; the module installs what is missing). Each run takes a
second or a few; the matrix runs only the faults that change what an agent is answered, a few agents at a time.
"""

from __future__ import annotations

import difflib
import getpass
import json
import os
import platform
import re
import socket
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from lmconform.agents import AGENTS
from lmconform.agents.agent import Agent, Launch
from lmconform.agents.codex import Codex
from lmconform.agents.codex import config as codex_config
from lmconform.agents.install import install, pinned_version
from lmconform.agents.outcome import REQUEST_LIMIT, TIME_LIMIT, AgentOutcome, AgentRun, Limits, ToolRun
from lmconform.agents.relay import Relay
from lmconform.agents.runner import run_agent
from lmconform.agents.sandbox import FILLER_LINE, Sandbox, task_file
from lmconform.cases import CASES_DIR, cases_folder, load_cases
from lmconform.checks.evaluate import evaluate
from lmconform.checks.registry import REGISTRY
from lmconform.checks.scope import agent_overflow
from lmconform.expectations import load_expectations
from lmconform.fuzz.agents import observations
from lmconform.record.agents import agent_case, overflow_case
from lmconform.record.kept import slug
from lmconform.record.scrub import LONG_HEX, PLACEHOLDER_UUID, SANDBOX, SESSION, SESSION_HEADERS, UUID
from lmconform.reference import FAULTS
from lmconform.reference.model import CONTEXT_WORDS
from lmconform.reference.overflow import lmstudio_words
from lmconform.run import RunPlan
from lmconform.run.agent_matrix import (
    AGENT_CHECKS,
    CLEAN_OVERFLOW,
    CLEAN_SOCKET,
    OVERFLOW_FAULTS,
    RACED,
    RACES,
    SOCKET_VARIANTS,
    Row,
    faults_of,
    row_line,
    socket_faults,
    socket_faults_of,
)
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.verdicts.agents import CASE_PREFIX, TASK_WORDS, task_words
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.profiles import FILE as PROFILES
from lmconform.verdicts.profiles import agent_profiles
from lmconform.verdicts.records import results_of
from lmconform.vocabulary import Outcome
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest
from lmconform.wire.websocket import WebSocketExchange
from tools.agents.matrix import (
    build,
    inputs_digest,
    made_from,
    page_with,
    published_lines,
    published_outcomes,
    write_page,
)
from tools.agents.profiles import (
    causes_section,
    committed_measured_dates,
    comparison,
    profiles_of,
    profiles_text,
    write_profiles,
)
from tools.catalogue import load as load_catalogue
from tools.targets.expected import differences, table

pytestmark = pytest.mark.waits

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "fixtures" / "agents" / "reference.toml"
PAGE = ROOT / "docs" / "agents.md"
WRITE_MATRIX = "LMCONFORM_WRITE_AGENTS_MATRIX"
TASK = "Read the file {file} and reply with the secret word it holds."
PASSING = ("✓", "·")  # OK, or nothing to judge


@pytest.fixture(scope="module")
def node_modules() -> Path:
    return install(tuple(AGENTS.values()))


# --- the agents on the clean reference server ----------------------------------------------------------------------

@pytest.mark.agents
def test_each_agent_does_its_task_as_fixtures_agents_reference_expects(server, node_modules):
    target = Target(base_url=server.base_url)
    settings = RunSettings(agents=tuple(AGENTS), agent_seconds=60, fuzz_examples=0)
    plan = RunPlan(target, expectations=load_expectations(EXPECTED), apis=tuple({a.api for a in AGENTS.values()}),
                   settings=settings)
    run = plan.start()
    try:
        for api in plan.apis:
            for case, check in plan.pairs(api):
                if case.agent is not None:
                    run.judge(case, check)
    finally:
        run.close()
    found = differences(run.verdicts, plan.expectations)
    assert not found, f"the agents' verdicts differ from {EXPECTED.name}:\n{table(found)}"
    judged = {(verdict.case_id, verdict.check.id): verdict for verdict in run.verdicts}
    assert {verdict.agent for verdict in run.verdicts} == {f"{agent.title} {agent.version(node_modules)}"
                                                           for agent in AGENTS.values()}
    # The reference server takes Codex's default tools (namespace, custom, web_search) as OpenAI does: every agent
    # works as a user runs it. LM Studio's refusal of them is the variant responses-function-tools-only, whose known
    # cause tests/test_causes.py grades on Codex's line.
    lines = {line.key: line for line in build_headline(results_of(run.results(), Path("run.json")).results).clients}
    assert {lines[f"agent-{name}-{agent.api}"].status for name, agent in AGENTS.items()} == {"works"}
    for agent in AGENTS.values():
        case = agent_case(agent).id
        assert all(judged[case, check.id].outcome is Outcome.OK for check in AGENT_CHECKS
                   if (case, check.id) in judged), agent.name


@pytest.mark.agents
def test_codex_does_its_task_with_the_tools_the_dialect_refuses_turned_off(server, node_modules):
    target = Target(base_url=server.base_url, model="lmconform-reference")
    run = run_agent(Codex(function_tools_only=True), target, TASK, "marigold", Limits(seconds=60, requests=10), node_modules)
    assert all(exchange.status == 200 for exchange in run.exchanges) and len(run.exchanges) == 2
    assert "marigold" in run.outcome.final_text and not run.outcome.errors
    assert run.outcome.tool_runs[0].arguments["cmd"].startswith("cat ") and not run.outcome.tool_runs[0].failed


# What each agent does against a server that refuses its request once (every agent asks again and finishes: works with
# limits), against one whose proxy answers every stream with a 502 page (none finishes: breaks), and against the clean
# server (works). Codex is run as its matrix runs it, with the tools LM Studio's dialect refuses turned off.
GRADED = [(None, "works"), ("model-loading-once", "works with limits"), ("bad-gateway-html", "breaks")]


def live_line(agent: Agent, run, target: Target):
    """The agent's line of the headline, from its agent checks' verdicts on the run, as a run records them."""
    examples = observations(agent_case(agent), run, target)
    rows = []
    for check in AGENT_CHECKS:
        verdicts = [verdict for observed in examples if (verdict := evaluate(check, observed)) is not None]
        if verdicts:
            rows.append(max(verdicts, key=lambda verdict: verdict.outcome.severity).record())
    document = {"lmconform": "0.1.0", "target": {"url": target.base_url, "label": "reference"},
                "started": "2026-12-02T10:00:00Z", "duration_s": 1.0, "results": rows}
    return next(line for line in build_headline(results_of(document, Path("run.json")).results).clients
                if line.basis == "run live")


@pytest.mark.agents
@pytest.mark.parametrize("name", sorted(AGENTS))
@pytest.mark.parametrize(("fault", "grade"), GRADED, ids=[fault or "clean" for fault, _ in GRADED])
def test_each_agent_is_graded_by_what_it_did_against_a_refusal_it_recovers_from_and_one_it_does_not(
        server, node_modules, name, fault, grade):
    agent = AGENTS[name].as_measured()
    target = Target(base_url=server.base_url + (f"/faults/{fault}" if fault else ""), model="lmconform-reference",
                    read_timeout=5, fingerprint={"kind": "reference"})
    # opencode never gives up on a 502: the time limit ends its run, which is its breaking; the others end by
    # themselves, in seconds on an idle machine, and are given a busy one's time.
    seconds = 20 if grade == "breaks" else 90
    run = run_agent(agent, target, agent_case(agent).agent.task, agent_case(agent).agent.secret,
                    Limits(seconds=seconds, requests=10), node_modules)
    line = live_line(agent, run, target)
    assert line.status == grade, f"{line.name}: {line.verdict}: {line.why}"
    if grade == "works with limits":  # the refused request, and the one that replaced it
        assert line.limits and "HTTP 503: Loading model" in line.limits[0] and "asked again" in line.limits[0]
    if grade == "breaks":
        assert line.why


# --- the fault × agent matrix ---------------------------------------------------------------------------------------

@pytest.mark.agents
def test_the_fault_agent_matrix_is_what_docs_agents_publishes(server, node_modules):
    """The page says which inputs it was made from (the pins, and the code that answers, runs and judges the agents).
    Made from these very inputs, its fault rows stand, and only the clean rows are run again (three runs); made from
    others, the whole matrix is (the faults that change an agent's answers: about 65 runs, a few minutes)."""
    versions = {name: agent.version(node_modules) for name, agent in AGENTS.items()}
    if os.environ.get(WRITE_MATRIX):
        write_page(PAGE, build(server.base_url, page=PAGE.read_text()), versions)
        write_profiles(PAGE, load_catalogue(), versions)
    page = PAGE.read_text()
    if made_from(page) == inputs_digest():
        for name, (clean, *_) in build(server.base_url, faults=False).items():
            assert f"### {AGENTS[name].title} {versions[name]}" in page and row_line(clean) in page, (
                f"{name} on the clean server no longer does what docs/agents.md says: {row_line(clean)}")
    else:
        now = page_with(page, build(server.base_url, page=page), versions, made_from(page) or "")
        diff = "\n".join(difflib.unified_diff(page.splitlines(), now.splitlines(), "committed", "now", lineterm=""))
        assert not diff, f"docs/agents.md no longer says what the agents do; `make agents-matrix` rewrites it:\n{diff}"
    # Each agent check fails, against each fault its proven_by names, for some agent of that fault's API, and passes
    # for that agent on the clean server: what the page shows, as these runs made it.
    published = published_outcomes(page)
    for position, check in enumerate(AGENT_CHECKS):
        for fault in check.proven_by:
            shown = [agent.title for agent in AGENTS.values() if fault in faults_of(agent)]
            assert any(fault in published[title] and published[title][fault][position] not in PASSING
                       and published[title][None][position] in PASSING
                       for title in shown), f"{check.id}: no agent shows {fault} failing it"


def test_the_agents_profiles_and_their_predictions_are_what_the_published_matrix_gives():
    # The profiles follow from two committed files, the page's matrix and the fault × check table: no agent runs.
    page, table = PAGE.read_text(), load_catalogue()
    versions = {name: pinned_version(agent) for name, agent in AGENTS.items()}
    profiles = profiles_of(page, table, versions, committed_measured_dates())
    assert PROFILES.read_text() == profiles_text(profiles), "`make agents-matrix` writes lmconform/verdicts/profiles.toml"
    assert comparison(profiles, table) in page, "`make agents-matrix` writes the page's predicted-and-live part"
    assert causes_section() in page, "`make agents-matrix` writes the page's list of known causes"
    assert {profile.agent for profile in profiles} == set(AGENTS) and agent_profiles() == {
        profile.agent: profile for profile in profiles}
    # Codex is measured with the tools LM Studio's dialect refuses turned off, so that defects reach it.
    assert agent_profiles()["codex"].faults["clean"] == "works" and AGENTS["codex"].measured_as in page


def test_every_agent_check_names_the_faults_that_prove_it():
    # Each a defect the matrix plays for some agent: one of its API's, or an overflow's on the overflow task.
    for check in AGENT_CHECKS:
        assert check.proven_by and all(FAULTS[name].api != "http" or name in OVERFLOW_FAULTS
                                       for name in check.proven_by), check.id


def test_a_race_is_shown_as_one_and_names_an_agent_and_a_fault_it_is_run_against():
    for agent, fault in RACES:
        assert fault in faults_of(AGENTS[agent]), (agent, fault)
    outcomes = tuple((check.id, Outcome.FAILED) for check in AGENT_CHECKS)
    line = row_line(Row("content-length-long", outcomes, "a race: one way or the other", raced=True))
    # The grade is the race's too; the accepted cell, what lmconform's own checks make of the answers, is not.
    assert line == f"| `content-length-long` | {RACED} | ✗ | {' | '.join([RACED] * (len(AGENT_CHECKS) - 1))} | " \
                   "a race: one way or the other |"


# --- agents that misbehave: stand-ins that do it on purpose --------------------------------------------------------

STAND_IN = textwrap.dedent("""
    import json, os, subprocess, sys, time, urllib.error, urllib.request
    what, base_url, marker, task = sys.argv[1:5]
    print(json.dumps({"said": "started"}), flush=True)
    if what.startswith("read"):  # the task's file sent as the prompt, as an agent sends its tool's output
        text = open(task.split()[3]).read()
        body = {"model": "lmconform-reference", "messages": [{"role": "user", "content": text}]}
        request = urllib.request.Request(base_url + "/v1/chat/completions", json.dumps(body).encode(),
                                         {"content-type": "application/json", "authorization": "Bearer sk-stand-in"})
        try:
            answer = json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"]
            print(json.dumps({"answer": answer}), flush=True)
        except urllib.error.HTTPError as error:
            if what == "read-and-say":
                print(json.dumps({"error": error.read().decode()}), flush=True)
                sys.exit(1)
    elif what == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])  # a child in its group
        time.sleep(600)
    elif what == "fail":
        print("stand-in: the server said no", file=sys.stderr, flush=True)
        sys.exit(3)
    elif what == "loop":
        while True:
            request = urllib.request.Request(base_url + "/v1/models", headers={"x-api-key": "sk-stand-in"})
            try:
                urllib.request.urlopen(request).read()
            except OSError:
                pass
""")


class StandIn(Agent):
    """An agent that hangs, fails or loops, as `what` says, speaking to the relay like an agent."""

    name, title, package, api, client = "stand-in", "Stand-in", "stand-in", "chat", "stand-in"
    measured, download_mb = "1.0", 0

    def __init__(self, what: str, marker: str) -> None:
        self.what, self.marker = what, marker

    def binaries(self, os_name: str, arch: str) -> tuple[str, ...]:
        return ("stand-in/agent.py",)

    def version(self, node_modules: Path) -> str:
        return "1.0"

    def launch(self, binary: Path, sandbox: Sandbox, base_url: str, model: str | None, task: str) -> Launch:
        return Launch((sys.executable, str(binary), self.what, base_url, self.marker, task), sandbox.environment())

    def outcome(self, events: list) -> AgentOutcome:
        return AgentOutcome(final_text=next((event["answer"] for event in events if "answer" in event), None),
                            errors=tuple(event["error"] for event in events if "error" in event))


@pytest.fixture
def stand_in_modules(tmp_path) -> Path:
    folder = tmp_path / "node_modules" / "stand-in"
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(STAND_IN)
    return tmp_path / "node_modules"


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def whole_run_verdicts(agent: Agent, run, target: Target) -> dict[str, object]:
    case = agent_case(AGENTS["opencode"])  # the stand-in speaks chat completions, as opencode does
    final = observations(case, run, target)[-1]
    return {check.id: evaluate(check, final) for check in AGENT_CHECKS}


def test_an_agent_that_hangs_is_stopped_at_its_limit_and_leaves_no_process(server, stand_in_modules):
    marker = f"lmconform-stand-in-{os.getpid()}-hang"
    target = Target(base_url=server.base_url)
    started = time.monotonic()
    run = run_agent(StandIn("hang", marker), target, TASK, "word", Limits(seconds=2, requests=5), stand_in_modules)
    assert run.ended == TIME_LIMIT and time.monotonic() - started < 30
    assert processes_with(marker) == [], "the agent's child outlived its run"
    verdict = whole_run_verdicts(StandIn("hang", marker), run, target)["agent.answer.reached_user"]
    assert verdict.outcome is Outcome.ERROR and "did not end within 2 s" in verdict.message
    assert '"said": "started"' in verdict.message  # its last output


def test_an_agent_that_exits_non_zero_has_its_stderr_as_evidence(server, stand_in_modules):
    target = Target(base_url=server.base_url)
    run = run_agent(StandIn("fail", "x"), target, TASK, "word", Limits(seconds=20, requests=5), stand_in_modules)
    verdicts = whole_run_verdicts(StandIn("fail", "x"), run, target)
    assert run.exit_status == 3
    for check in ("agent.error.none_shown", "agent.answer.reached_user"):
        assert verdicts[check].outcome is Outcome.FAILED
        assert "stand-in: the server said no" in verdicts[check].message, check


def test_an_agent_that_loops_is_stopped_after_its_requests(server, stand_in_modules):
    target = Target(base_url=server.base_url)
    run = run_agent(StandIn("loop", "x"), target, TASK, "word", Limits(seconds=30, requests=4), stand_in_modules)
    assert run.ended == REQUEST_LIMIT and run.requests == 5 and len(run.exchanges) == 4
    verdict = whole_run_verdicts(StandIn("loop", "x"), run, target)["agent.loop.bounded"]
    assert verdict.outcome is Outcome.FAILED and "request 5" in verdict.message


# --- a file past the context: how an agent ends on the overflow ------------------------------------------------------

OVERFLOW = "agent.overflow.ended_clearly"


CODEX_PROMPT_WORDS = 3000  # Codex CLI 0.171.0's request before its tool's output, as the reference server counts it


def test_each_agents_overflow_task_has_a_file_past_the_context_in_what_its_tool_keeps():
    for agent in AGENTS.values():
        case, task = overflow_case(agent), agent_case(agent)
        assert not task.agent.file_words and case.agent.file_words and agent_overflow(case)
        text = task_file(case.agent.secret, case.agent.file_words)
        lines = text.splitlines()
        assert lines[-1] == f"The secret word is {case.agent.secret}." and len(text.split()) > CONTEXT_WORDS + 1000
        # What the agents' tools keep: 2,000 lines (opencode's read, Claude Code's Read, each line cut at 2,000
        # characters), and about 10 KiB of a command's output (Codex), which beside Codex's own prompt (about 3,000
        # words of its instructions and the task) is past the context.
        assert len(lines) <= 2000 and max(map(len, lines)) <= 2000
        assert len(text.encode()[:10 * 1024].split()) + CODEX_PROMPT_WORDS > CONTEXT_WORDS, agent.name
    assert task_file("word") == "The secret word is word.\n"


def overflow_run(ended: str = "exited", final_text: str | None = None, errors: tuple[str, ...] = ()) -> AgentRun:
    refused = HttpExchange(HttpRequest("POST", "http://127.0.0.1:1/v1/chat/completions", {},
                                       {"messages": [{"role": "tool", "content": FILLER_LINE}]}), status=400,
                           headers={"content-type": "application/json"},
                           chunks=[BodyChunk(0.0, b'{"error": "context length of only 4096 tokens"}')])
    return AgentRun("stand-in", "Stand-in", "1.0", TASK, "quince", Limits(30, 12), exchanges=(refused,),
                    requests=13 if ended == REQUEST_LIMIT else 1, ended=ended, exit_status=1 if errors else 0,
                    exit_text="exit status 1" if errors else "exit status 0",
                    outcome=AgentOutcome(final_text, errors=errors))


@pytest.mark.parametrize(("run", "outcome", "said"), [
    (overflow_run(errors=("Prompt is too long",)), Outcome.OK, ""),
    (overflow_run(errors=("Codex ran out of room in the model's context window.",)), Outcome.OK, ""),
    (overflow_run(final_text="I compacted the history; the file is filler up to its last line."), Outcome.OK, ""),
    (overflow_run(errors=("API Error: 500 Internal Server Error",)), Outcome.FAILED, "does not name the overflow"),
    (overflow_run(errors=('API Error: 400 {"detail":"Prompt too long"}',)), Outcome.FAILED,
     "does not name the overflow"),
    (overflow_run(final_text=lmstudio_words(8000)), Outcome.FAILED, "as the model's answer"),
    (overflow_run(), Outcome.FAILED, "neither an answer nor an error"),
    (overflow_run(REQUEST_LIMIT), Outcome.FAILED, "asked for request 13 and was stopped"),
    (overflow_run(TIME_LIMIT), Outcome.FAILED, "still going after 30 s"),
], ids=["overflow-named", "codex-words", "went-on", "500", "detail", "as-text", "silent", "loop", "time-limit"])
def test_how_an_agent_ends_on_an_overflow_is_judged_by_what_it_showed(run, outcome, said):
    target = Target(base_url="http://127.0.0.1:1", fingerprint={"kind": "reference"})
    (final,) = observations(overflow_case(AGENTS["opencode"]), run, target)
    # The request that carried the file is an overflow, judged as a written overflow case is.
    assert final.case.overflows_context and final.case.expect_status == "success_or_client_error"
    verdict = evaluate(REGISTRY[OVERFLOW], final)
    assert verdict.outcome is outcome and said in verdict.message, verdict.message
    # On a file past the context there is no answer to judge: the checks of an answer have no verdict, and the
    # overflow check has none on the ordinary task.
    assert {check.id for check in AGENT_CHECKS if evaluate(check, final) is not None} <= {
        OVERFLOW, "agent.tool.ran_with_arguments_sent"}
    (ordinary,) = observations(agent_case(AGENTS["opencode"]), run, target)
    assert evaluate(REGISTRY[OVERFLOW], ordinary) is None and not ordinary.case.overflows_context


@pytest.mark.parametrize(("what", "outcome"), [("read-and-say", Outcome.OK), ("read-in-silence", Outcome.FAILED),
                                               ("loop", Outcome.FAILED)])
def test_a_stand_in_that_reads_a_file_past_the_context_is_refused_and_judged_by_how_it_ends(
        server, stand_in_modules, what, outcome):
    target = Target(base_url=server.base_url, model="lmconform-reference")
    case = overflow_case(AGENTS["opencode"])  # the stand-in speaks chat completions, as opencode does
    run = run_agent(StandIn(what, "x"), target, case.agent.task, case.agent.secret, Limits(seconds=30, requests=4),
                    stand_in_modules, file_words=case.agent.file_words)
    final = observations(case, run, target)[-1]
    if what != "loop":  # the file it sent was refused as an overflow, in LM Studio's words
        assert final.exchange.status == 400 and final.case.overflows_context
        assert evaluate(REGISTRY["errors.context_overflow.refused_as_overflow"], final).outcome is Outcome.OK
    verdict = evaluate(REGISTRY[OVERFLOW], final)
    assert verdict.outcome is outcome, verdict.message


def test_a_row_of_the_overflow_task_is_named_apart_from_the_clean_row():
    outcomes = tuple((check.id, None) for check in AGENT_CHECKS)
    clean, overflowing = Row(None, outcomes, "answered"), Row(None, outcomes, "showed: Prompt is too long", overflow=True)
    assert (clean.key, clean.server) == (None, "clean")
    assert overflowing.key == overflowing.server == CLEAN_OVERFLOW
    assert Row("context-overflow-500", outcomes, "x", overflow=True).server == "`context-overflow-500`"
    assert set(OVERFLOW_FAULTS) <= set(faults_of(AGENTS["claude-code"]))


def test_the_matrix_plays_each_overflow_defect_on_the_overflow_task_for_each_agent():
    # What docs/agents.md publishes: the clean server refuses the overflow and every agent ends clearly on it; each
    # defect of the refusal is a row of its own (never "changes nothing"), judged by the overflow column alone.
    published = published_outcomes(PAGE.read_text())
    column = [check.id for check in AGENT_CHECKS].index(OVERFLOW)
    answer = [check.id for check in AGENT_CHECKS].index("agent.answer.reached_user")
    rows = published_lines(PAGE.read_text())
    for agent in AGENTS.values():
        cells = published[agent.title]
        assert cells[CLEAN_OVERFLOW][column] == "✓" and cells[CLEAN_OVERFLOW][answer] == "·", agent.title
        assert cells[None][column] == "·"
        for fault in OVERFLOW_FAULTS:
            assert rows[agent.title][fault] != rows[agent.title][None], (agent.title, fault)
            assert cells[fault][answer] == "·" and cells[fault][column] in ("✓", "✗", RACED), (agent.title, fault)


def test_an_agent_not_installed_is_unsupported_with_the_reason(server, tmp_path):
    target = Target(base_url=server.base_url)
    run = run_agent(AGENTS["claude-code"], target, TASK, "word", Limits(10, 5), tmp_path / "nothing")
    examples = observations(agent_case(AGENTS["claude-code"]), run, target)
    verdicts = [evaluate(check, observed) for observed in examples for check in REGISTRY.values()
                if check.applies(observed.case)]
    assert {verdict.outcome for verdict in verdicts if verdict} == {Outcome.UNSUPPORTED}
    assert "lmconform agents install" in verdicts[0].detail


# --- the report ----------------------------------------------------------------------------------------------------

def agent_rows(agent: str, case: str, outcomes: dict[str, str], actual: str = "HTTP 400") -> list[dict]:
    """Results-record rows of one agent's case, its agent checks' outcomes as given."""
    return [{"case": case, "check": check, "kind": "agent", "level": "SHOULD" if check.endswith("accepted") else "MUST",
             "outcome": outcome, "title": check, "message": f"[{check}] {check}\nActual:   {actual}", "evidence": "",
             "curl": "", "agent": agent} for check, outcome in outcomes.items()]


def headline_of(rows: list[dict]) -> dict:
    document = {"lmconform": "0.1.0", "target": {"url": "http://127.0.0.1:1234", "label": "reference"},
                "started": "2026-11-26T10:00:00Z", "duration_s": 1.0, "results": rows}
    return {line.name: line for line in build_headline(results_of(document, Path("run.json")).results).clients}


def test_each_agent_is_a_line_graded_by_what_it_did_and_named_with_its_version():
    done = {"agent.answer.reached_user": "OK", "agent.error.none_shown": "OK"}
    recovered = "HTTP 400: messages.1.role: Input should be 'user' or 'assistant'; Claude Code 2.1.332 asked again " \
                "without messages[1] (a system turn), and finished its task"
    lines = headline_of(
        agent_rows("Claude Code 2.1.332", "messages/agent-claude-code",
                   {"agent.request.accepted": "NON-STRICT", **done}, recovered)
        + agent_rows("Codex CLI 0.171.0", "responses/agent-codex",
                     {"agent.request.accepted": "NON-STRICT", "agent.answer.reached_user": "FAILED"})
        + agent_rows("opencode 1.18.33", "chat/agent-opencode", {"agent.request.accepted": "OK", **done}))
    claude = lines["Claude Code 2.1.332 · Anthropic Messages"]
    assert (claude.status, claude.verdict) == ("works with limits", "! works with limits (run live)")
    assert claude.limits == (recovered,) and claude.cause.id == "system-turn-refused"
    assert "0.4.15" in claude.way_round
    codex = lines["Codex CLI 0.171.0 · Responses"]
    assert codex.status == "breaks" and codex.why.startswith("refused: HTTP 400")  # the refusal is why it broke
    assert lines["opencode 1.18.33 · Chat completions"].status == "works"


def test_the_tool_an_agent_ran_is_held_to_every_reading_of_a_stream_that_says_its_arguments_twice():
    # A Responses stream whose first argument delta comes before its item's `output_item.added`: pieced together from
    # the deltas, the arguments do not parse; the `done` events say them whole, and Codex ran those. Codex did what
    # the answer sent (the stream's contradiction is the wire checks' finding); a run of something else did not.
    events = [("response.created", {"response": {"id": "resp_1", "status": "in_progress", "output": []}}),
              ("response.function_call_arguments.delta", {"item_id": "fc_1", "output_index": 0, "delta": '{"cmd'}),
              ("response.output_item.added", {"output_index": 0, "item": {
                  "id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": ""}}),
              ("response.function_call_arguments.delta", {"item_id": "fc_1", "output_index": 0,
                                                          "delta": '":"cat secret.txt"}'}),
              ("response.function_call_arguments.done", {"item_id": "fc_1", "output_index": 0,
                                                         "arguments": '{"cmd":"cat secret.txt"}'}),
              ("response.output_item.done", {"output_index": 0, "item": {
                  "id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "exec_command",
                  "arguments": '{"cmd":"cat secret.txt"}'}}),
              ("response.completed", {"response": {"id": "resp_1", "status": "completed", "output": []}})]
    body = "".join(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n" for kind, data in events).encode()
    request = HttpRequest("POST", "http://127.0.0.1:1/v1/responses", {}, {"stream": True})
    exchange = HttpExchange(request, status=200, headers={"content-type": "text/event-stream"},
                            chunks=[BodyChunk(0.0, body)])
    case = agent_case(AGENTS["codex"])
    check = REGISTRY["agent.tool.ran_with_arguments_sent"]
    for ran, outcome in (("cat secret.txt", Outcome.OK), ("cat other.txt", Outcome.FAILED)):
        run = AgentRun("codex", "Codex CLI", "0.171.0", TASK, "word", Limits(10, 5), exchanges=(exchange,),
                       outcome=AgentOutcome("done", (ToolRun("", {"cmd": ran}),)))
        verdict = evaluate(check, observations(case, run, Target(base_url="http://127.0.0.1:1"))[0])
        assert verdict.outcome is outcome, verdict.message
    assert "says the arguments of exec_command 2 ways" not in verdict.message  # the failing run: each reading named
    assert "it ran ({\"cmd\": \"cat other.txt\"})" in verdict.message


# --- what the agents are on record as sending ------------------------------------------------------------------------

RECORDED = sorted(path for agent in AGENTS.values()
                  for path in cases_folder(CASES_DIR, agent.api).glob(f"recorded-{agent.name}-*.json"))


@pytest.mark.agents
def test_every_pinned_agent_is_on_record_at_its_version(node_modules):
    for agent in AGENTS.values():
        version = agent.version(node_modules)
        found = [path for path in RECORDED if path.name.startswith(f"recorded-{agent.name}-{slug(version)}-")]
        assert found, f"no recorded case of {agent.title} {version}: `make record-agents` records them"
        provenances = [json.loads(path.read_text())["provenance"] for path in found]
        assert {provenance["client"] for provenance in provenances} == {f"{agent.client} {version}"}
        assert {provenance["model_shape"] for provenance in provenances} == {shape.name for shape in agent.model_shapes}


def test_the_recorded_agent_cases_hold_nothing_of_the_recording_machine():
    user, home, release, host = getpass.getuser(), str(Path.home()), platform.release(), socket.gethostname()
    for path in RECORDED:
        text = path.read_text()
        if home not in ("/", ""):
            assert not re.search(rf"(?<![\w/.-]){re.escape(home)}(?=[/\"'\s]|$)", text), path.name
        assert f"/home/{user}" not in text and f"/Users/{user}" not in text, path.name
        assert release not in text, path.name
        assert len(host) < 4 or host not in text, path.name
        assert all(uuid.startswith(PLACEHOLDER_UUID) for uuid in UUID.findall(text)), path.name
        assert not [found for found in LONG_HEX.findall(text) if set(found) != {"0"}], path.name
        assert set(SANDBOX.findall(text)) <= {"lmconform-agent-sandbox"}, path.name
        headers = json.loads(text)["provenance"]["headers"]
        assert all(headers[name] == SESSION for name in SESSION_HEADERS & set(headers)), path.name


# --- the relay -----------------------------------------------------------------------------------------------------

def test_the_relay_sends_the_targets_model_in_place_of_the_alias_the_agent_asks_for(server):
    target = Target(base_url=server.base_url, model="lmconform-reference")
    asked = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "Hello"}]}
    with Relay(target, limit=5, alias="claude-sonnet-4-5") as relay, httpx.Client(timeout=10) as client:
        answered = client.post(relay.base_url + "/v1/messages", json=asked)
        other = client.post(relay.base_url + "/v1/messages", json={**asked, "model": "another-model"})
    assert answered.status_code == other.status_code == 200
    sent = [exchange.request.body["model"] for exchange in relay.exchanges]
    assert sent == ["lmconform-reference", "another-model"]  # only the alias is replaced
    assert Relay(target, limit=1, alias="lmconform-reference").alias is None  # the target's own id is no alias


def test_the_relay_passes_an_answer_on_as_it_arrives_with_the_targets_key(server):
    # The `stall` fault sends a stream's first events, then nothing: through the relay, they arrive all the same.
    target = Target(base_url=server.base_url + "/faults/stall", api_key="sk-target", read_timeout=3)
    body = {"model": "lmconform-reference", "stream": True, "messages": [{"role": "user", "content": "Hello"}]}
    with Relay(target, limit=5) as relay, httpx.Client(timeout=10) as client:
        with client.stream("POST", relay.base_url + "/v1/chat/completions", json=body,
                           headers={"authorization": "Bearer sk-agent"}) as answer:
            first = next(answer.iter_bytes())
        assert first.startswith(b"data: ")
    (exchange,) = relay.exchanges
    assert exchange.request.headers["Authorization"] == "Bearer [Filtered]" and "sk-agent" not in json.dumps(
        exchange.request.headers)
    assert exchange.error_kind == "timeout"


def test_the_relay_passes_a_websocket_on_and_keeps_what_its_upgrade_was_answered_with(server):
    # Codex in the Responses API's WebSocket mode opens a socket on /v1/responses: through the relay, each message
    # is answered as the target answers it, with the target's key; a server that does not offer the mode refuses it
    # to the agent as it refused it to the relay.
    message = {"type": "response.create", "model": "lmconform-reference", "input": "Say hello"}
    target = Target(base_url=server.base_url, model="lmconform-reference", api_key="sk-target", read_timeout=5)
    with Relay(target, limit=5) as relay:
        with connect("ws" + relay.base_url[4:] + "/v1/responses",
                     additional_headers={"Authorization": "Bearer sk-agent"}) as socket_:
            for _ in range(2):  # two turns on one socket
                socket_.send(json.dumps(message))
                types = []
                while not types or types[-1] not in ("response.completed", "error"):
                    types.append(json.loads(socket_.recv(timeout=10))["type"])
                assert types[0] == "response.created" and types[-1] == "response.completed"
    (opened,) = relay.exchanges
    assert isinstance(opened, WebSocketExchange) and opened.status == 101 and relay.requests == 1
    refusing = replace(target, base_url=server.base_url + "/faults/responses-websocket-not-offered")
    with Relay(refusing, limit=5) as relay, pytest.raises(InvalidStatus) as refused:
        connect("ws" + relay.base_url[4:] + "/v1/responses", open_timeout=10)
    assert refused.value.response.status_code == 404
    (upgrade,) = relay.exchanges
    assert upgrade.status == 404 and b"Unexpected endpoint or method" in upgrade.refusal
    assert upgrade.refusal == bytes(refused.value.response.body)


def test_the_defects_of_the_websocket_mode_are_played_on_codex_set_to_use_it_and_no_other_run():
    played_over_socket = socket_faults()
    assert {"websocket-upgrade-200", "websocket-closed-mid-response", "responses-websocket-not-offered"} <= set(
        played_over_socket)
    assert not {"chain-ignored", "no-response-completed", "tool-types-dropped"} & set(played_over_socket)
    codex = Codex()
    assert socket_faults_of(codex) == list(played_over_socket)
    # As Codex runs by default, over HTTP, they are played too: they change nothing it gets.
    assert set(played_over_socket) - set(SOCKET_VARIANTS) <= set(faults_of(codex))
    row = Row("websocket-upgrade-200", (), "", socket=True)
    assert row.key == "websocket-upgrade-200, over the WebSocket" and row.server == "`websocket-upgrade-200`, over the WebSocket"
    assert Row(None, (), "", socket=True).key == Row(None, (), "", socket=True).server == CLEAN_SOCKET
    assert socket_faults_of(AGENTS["claude-code"]) == socket_faults_of(AGENTS["opencode"]) == []
    assert "supports_websockets = true" in codex_config("http://127.0.0.1:1", "m", websockets=True)
    assert "supports_websockets" not in codex_config("http://127.0.0.1:1", "m")
    over_socket = codex.over_websocket()
    assert over_socket is not None and over_socket.as_measured().websockets  # type: ignore[attr-defined]


def test_each_agent_case_is_a_headline_line_named_apart_from_the_agent_s_others():
    # Two lines of one label would be one row of a matrix page: the ordinary task's verdict hiding the other's.
    names = [case.id.partition("/")[2].removeprefix(CASE_PREFIX) for agent in AGENTS.values()
             for case in load_cases(agent.api) if case.id.partition("/")[2].startswith(CASE_PREFIX)]
    assert names and all(name in AGENTS or (task_words(name) and name.removesuffix(next(
        ending for ending in TASK_WORDS if name.endswith(ending))) in AGENTS) for name in names), names
    assert task_words("codex") == "" and task_words("codex-overflow") == "its file past the context"
    assert task_words("claude-code-claude-id") == "asked for a claude-* model id"
