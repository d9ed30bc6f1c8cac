"""Generated requests (the `requests` source of chat/ and responses/fuzz-requests-*): valid requests that must be
answered and pass every check, and requests with one violation each that must be refused. Each fault that only a
generated request reaches is found by a default-budget run, unaided, and shrunk to its minimal request; a finding
becomes a case that replays it; the same seed sends the same requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import budget
import processes
import pytest
from hypothesis import HealthCheck, given, settings

from lmconform.api_table import APIS
from lmconform.apis.chat.reference.faults.generated import LONG_NAME, object_depth
from lmconform.cases import load_case, load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import evaluate
from lmconform.fuzz import requests
from lmconform.reference.faults import FAULTS
from lmconform.run import run_suite
from lmconform.run.play import play
from lmconform.schemas import PAYLOAD_SCHEMAS, schema_set
from lmconform.settings import DEFAULT_FUZZ_SHRINK, RunSettings
from lmconform.target import Target
from lmconform.verdicts.records import load_run
from lmconform.vocabulary import Level, Outcome

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = {Outcome.FAILED, Outcome.NON_STRICT}
# The APIs whose folders generate requests (a fuzz.py).
GENERATING = tuple(name for name, api in APIS.items() if api.room("fuzz") is not None)
SOURCES = {(case.api, requests.mode_of(case)): case for api in GENERATING for case in load_cases(api)
           if case.source == requests.SOURCE}


def generated_run(server, fault: str | None, api: str, written: bool = False, **settings):
    """A run of `api`'s generated requests (with `written`, of its written and recorded cases too) against the
    reference server or one of its faults, judged by the checks of errors and HTTP statuses."""
    target = Target(base_url=server.base_url + (f"/faults/{fault}" if fault else ""), profile="reference")
    cases = None if written else tuple(case.id for (of, _), case in SOURCES.items() if of == api)
    return run_suite(target, apis=(api,), include=("errors.*", "http.*"), settings=RunSettings(**settings),
                     cases=cases)


def finding(run, source):
    """The verdict with a finding on `source`, and the request it was shrunk to."""
    found = [verdict for verdict in run.verdicts if verdict.case_id == source.id and verdict.outcome in FINDINGS]
    assert found, f"no finding on {source.id}"
    return found[0], run.examples(source)[-1].case.body


def test_each_mode_of_each_api_has_its_seed_case():
    assert set(SOURCES) == {(api, mode) for api in GENERATING for mode in requests.MODES}


@pytest.mark.parametrize("api", GENERATING)
def test_generated_valid_requests_meet_the_request_schema(api):
    schemas, path = schema_set(None), PAYLOAD_SCHEMAS[(api, "request")]

    @settings(max_examples=budget.examples(150), database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(requests.generated_requests(api).BODIES)
    def valid(body):
        # `model` is the run's to fill in; everything else a valid request needs is generated.
        broken = [finding for finding in schemas.findings(path, {"model": "m", **body})
                  if finding.level in (Level.MUST, Level.SHOULD)]
        assert not broken, (broken, body)

    valid()


def test_deep_parameters_are_found_and_shrunk_to_one_tool_two_objects_deep(server):
    verdict, body = finding(generated_run(server, "deep-parameters-500", "chat"), SOURCES[("chat", "positive")])
    assert verdict.check.id == "http.status.success_for_valid_request" and verdict.outcome is Outcome.FAILED
    assert len(body["tools"]) == 1 and object_depth(body["tools"][0]["function"]["parameters"]) == 2
    assert len(body["messages"]) == 1
    assert "curl -sS -N -X POST" in verdict.curl and "Replay:" in verdict.evidence


def test_fuzz_shrink_bounds_the_requests_a_finding_shrinks_with(server):
    source = SOURCES[("chat", "positive")]
    for shrink in (0, 3):
        run = generated_run(server, "deep-parameters-500", "chat", fuzz_shrink=shrink, fuzz_mode="positive")
        verdict, _ = finding(run, source)
        played = run.examples(source)
        # The finding's index counts every request of the search: those kept, the first finding, the shrinking.
        assert played[-1].case.provenance["generated"]["example"] <= len(played) - 1 + shrink
        assert verdict.check.id == "http.status.success_for_valid_request"


def test_a_long_tool_name_is_found_and_shrunk_to_one_name_just_over_the_limit(server):
    verdict, body = finding(generated_run(server, "long-tool-name-500", "chat"), SOURCES[("chat", "positive")])
    assert verdict.check.id == "http.status.success_for_valid_request"
    assert len(body["tools"]) == 1 and len(body["tools"][0]["function"]["name"]) == LONG_NAME + 1


def test_astral_text_is_found_and_shrunk_to_one_message_without_tools(server):
    verdict, body = finding(generated_run(server, "astral-text-500", "chat"), SOURCES[("chat", "positive")])
    assert verdict.check.id == "http.status.success_for_valid_request"
    assert "tools" not in body and len(body["messages"]) == 1
    assert any(ord(character) > 0xFFFF for character in json.dumps(body["messages"], ensure_ascii=False))


def test_an_unknown_role_accepted_is_found_with_a_one_message_request(server):
    verdict, body = finding(generated_run(server, "unknown-role-accepted", "chat"), SOURCES[("chat", "negative")])
    assert verdict.check.id.startswith("errors.")
    assert len(body["messages"]) == 1 and body["messages"][0]["role"] not in ("system", "developer", "user",
                                                                              "assistant", "tool")


def test_an_unknown_tool_choice_accepted_is_found_with_one_tool_offered(server):
    run = generated_run(server, "unknown-tool-choice-accepted", "responses")
    verdict, body = finding(run, SOURCES[("responses", "negative")])
    assert verdict.check.id.startswith("errors.")
    assert len(body["tools"]) == 1 and body["tool_choice"]["name"] != body["tools"][0]["name"]


@pytest.mark.parametrize("api", GENERATING)
def test_out_of_range_numbers_accepted_are_found_and_shrunk_to_one_member(server, api):
    run = generated_run(server, "bounds-ignored", api, fuzz_mode="negative")
    verdict, body = finding(run, SOURCES[(api, "negative")])
    # A value out of its documented range is a SHOULD: lenient servers accept such values on purpose.
    assert verdict.check.id == "errors.status.client_error_for_value_out_of_spec"
    assert verdict.outcome is Outcome.NON_STRICT
    plain = requests.generated_requests(api).representatives({"name": "f"})[0]
    (member,) = [key for key in body if key not in plain and key != "stream"]  # the one member out of range
    assert isinstance(body[member], int | float) and not isinstance(body[member], bool), body
    assert f"one violation: {member}" in run.examples(SOURCES[(api, "negative")])[-1].case.provenance["note"]


@pytest.mark.parametrize("fault, api", [("deep-parameters-500", "chat"), ("long-tool-name-500", "chat"),
                                        ("astral-text-500", "chat"), ("unknown-role-accepted", "chat"),
                                        ("unknown-tool-choice-accepted", "responses"), ("bounds-ignored", "chat"),
                                        ("bounds-ignored", "responses")])
def test_no_written_or_recorded_case_reaches_the_faults_of_generated_requests(server, fault, api):
    run = generated_run(server, fault, api, written=True, fuzz_examples=0)
    # (A known limit of the reference server's LM Studio dialect, Codex's tool types, shows with or without a fault.)
    assert {verdict.outcome for verdict in run.verdicts if not verdict.known_limit} == {Outcome.OK}


def test_the_clean_server_gives_no_finding_on_generated_requests(server):
    for api in GENERATING:
        run = generated_run(server, None, api, fuzz_examples=budget.fuzz_examples())
        assert {verdict.outcome for verdict in run.verdicts} == {Outcome.OK}
        for mode in requests.MODES:
            played = run.examples(SOURCES[(api, mode)])
            assert len(played) == budget.fuzz_examples() and all(example.case.provenance["generated"]["mode"] == mode
                                              for example in played)


def test_the_same_seed_sends_the_same_requests_and_another_seed_others(server):
    def bodies(seed):
        run = generated_run(server, None, "chat", fuzz_examples=8, fuzz_seed=seed)
        return [example.case.body for example in run.examples(SOURCES[("chat", "positive")])]

    assert bodies(7) == bodies(7) != bodies(8)


# Draws the requests of chat's generated sources in a process of its own, without playing them, after importing the
# module named by its first argument (from the folder of its second) when there is one; prints them as JSON lines.
DRAW_IN_A_PROCESS = """
import importlib, json, sys
from lmconform.cases import load_cases
from lmconform.fuzz import requests
if len(sys.argv) > 2:
    sys.path.insert(0, sys.argv[2])
    importlib.import_module(sys.argv[1])
for case in load_cases("chat"):
    if case.source == requests.SOURCE:
        drawn = []
        requests.search(case, lambda example: drawn.append(example.body), lambda observed: False, 40)
        print(json.dumps(drawn, sort_keys=True))
"""


def test_the_same_seed_sends_the_same_requests_whatever_the_process_imported(tmp_path):
    """Hypothesis may draw constants from the source of the modules a process imported (pytest's plugins, a
    checkout's own code, the user's modules); lmconform's searches leave them out, so `pytest suites`, `lmconform
    check` and an installed lmconform send the same requests for the same seed."""
    module = tmp_path / "many_constants.py"
    module.write_text("VALUES = [" + ", ".join([*map(str, range(-40, 300, 3)), *(repr(f"word{index}")
                                                                                 for index in range(100))]) + "]\n")

    def drawn(*imported: str) -> str:
        finished = subprocess.run([sys.executable, "-c", DRAW_IN_A_PROCESS, *imported], capture_output=True,
                                  text=True, cwd=ROOT, timeout=300)
        assert finished.returncode == 0, finished.stderr[-2000:]
        return finished.stdout

    alone = drawn()
    assert alone.count("\n") == 2 and alone == drawn("many_constants", str(tmp_path))


# Draws every generated source's requests, valid and invalid, without playing them.
DRAW_EVERY_SOURCE = """
from lmconform.api_table import APIS
from lmconform.cases import load_cases
from lmconform.fuzz import requests
for api in APIS:
    if APIS[api].room("fuzz") is not None:
        for case in load_cases(api):
            if case.source == requests.SOURCE:
                requests.search(case, lambda example: None, lambda observed: False, 40)
"""


def test_drawing_the_generated_requests_never_makes_hypothesis_encode_every_character(tmp_path):
    """A text strategy given no characters (or a codec) makes Hypothesis encode all 1.1 million code points once per
    storage directory, 3 to 6 CPU-seconds of a run in a fresh output folder; the generated requests name their
    characters by category (lmconform.fuzz.bodies), so a new storage directory gets no table of a codec."""
    finished = subprocess.run([sys.executable, "-c", DRAW_EVERY_SOURCE], capture_output=True, text=True, cwd=ROOT,
                              timeout=600, env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path)})
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert [path.name for path in tmp_path.rglob("codec-*")] == []


def test_fuzz_mode_negative_sends_no_valid_generated_request(server):
    run = generated_run(server, None, "chat", fuzz_mode="negative", fuzz_examples=5)
    assert run.examples(SOURCES[("chat", "positive")]) == []
    assert len(run.examples(SOURCES[("chat", "negative")])) == 5


def test_a_saved_finding_loads_as_a_case_and_reproduces_on_the_next_run(server, tmp_path):
    fault = f"{server.base_url}/faults/unknown-role-accepted"
    run = run_suite(Target(base_url=fault, profile="reference"), settings=RunSettings(fuzz_save=str(tmp_path)),
                    apis=("chat",), include=("errors.*",), cases=(SOURCES[("chat", "negative")].id,))
    (saved,) = (tmp_path / "chat").glob("generated-*.json")
    case = load_case(saved)  # validated by the case schema
    assert case.invalid and case.provenance["generated"]["source"] == "requests"
    assert f"Saved as the case chat/{saved.stem}" in "\n".join(v.evidence for v in run.verdicts)
    check = REGISTRY["errors.status.client_error_for_invalid_request"]
    assert evaluate(check, play(case, Target(base_url=fault))).outcome is Outcome.FAILED
    assert evaluate(check, play(case, Target(base_url=server.base_url))).outcome is Outcome.OK


def test_a_finding_reaches_the_results_record_junit_and_html_with_its_curl(tmp_path):
    results, junit, html = tmp_path / "results.json", tmp_path / "junit.xml", tmp_path / "report.html"
    command = [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-p", "no:cacheprovider", "-q",
               "--reference-fault", "astral-text-500", "--checks", "http.status.*", "--cases", "chat/fuzz-requests-valid",
               "--fuzz-shrink", str(budget.examples(DEFAULT_FUZZ_SHRINK)),
               "--results-json", str(results), "--junitxml", str(junit), "--report", str(html)]
    finished = processes.run(command, cwd=ROOT, timeout=600)
    assert finished.returncode == 1, finished.stdout[-2000:]
    (row,) = [row for row in load_run(results).results if row.outcome == "FAILED"]
    assert row.case == "chat/fuzz-requests-valid" and "curl -sS -N -X POST" in row.curl
    assert "generated by lmconform's requests source (positive)" in row.evidence
    (message,) = [failure.get("message") for failure in ElementTree.parse(junit).iter("failure")]
    assert message.startswith("[http.status.success_for_valid_request]")
    assert "Reproduce: curl" in html.read_text() or "curl -sS -N -X POST" in html.read_text()


EFFECTS = [  # (fault, path, body): the fault changes the answer to this request, the clean server answers otherwise
    ("deep-parameters-500", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {
            "type": "object", "properties": {"b": {"type": "object"}}}}}}}]}),
    ("long-tool-name-500", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                                                    "tools": [{"type": "function", "function": {"name": "n" * 41}}]}),
    ("astral-text-500", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi \U0001F600"}]}),
    ("unknown-role-accepted", "/v1/chat/completions", {"messages": [{"role": "robot", "content": "hi"}]}),
    ("unknown-tool-choice-accepted", "/v1/responses", {"input": "hi", "tools": [{"type": "function", "name": "f"}],
                                                       "tool_choice": {"type": "function", "name": "g"}}),
    ("bounds-ignored", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "temperature": 5}),
]


@pytest.mark.parametrize("fault, path, body", EFFECTS, ids=[effect[0] for effect in EFFECTS])
def test_each_fault_of_generated_requests_changes_exactly_its_answer(client, fault, path, body):
    clean, faulty = client.post(path, json=body), client.post(f"/faults/{fault}{path}", json=body)
    if fault.endswith("-500"):
        assert clean.status_code == 200 and faulty.status_code == 500
    else:
        assert clean.status_code == 400 and faulty.status_code == 200
    assert FAULTS[fault].generated_only


# No false alarm over a long run: 1,000 examples of each mode of an API against the clean reference server take
# minutes, so each API is a test of its own, for `make test`'s workers to share (`make check` sends 100).
LONG_RUN = budget.examples(1000)


@pytest.mark.parametrize("api", GENERATING)
def test_a_thousand_generated_requests_of_each_mode_raise_no_false_alarm_on_the_clean_reference_server(api):
    from lmconform.reference import ReferenceServer
    from lmconform.run import RunPlan

    with ReferenceServer() as server:
        plan = RunPlan(Target(base_url=server.base_url, profile="reference"), probe=False,
                       settings=RunSettings(fuzz_examples=LONG_RUN))
        run = plan.start()
        try:
            sources = [case for case in load_cases(api) if case.source == requests.SOURCE]
            for case in sources:
                for check in plan.checks:
                    run.judge(case, check)
            played = {case.id: len(run.examples(case)) for case in sources}
        finally:
            run.close()
    assert played == {case.id: LONG_RUN for case in sources}
    assert {verdict.outcome for verdict in run.verdicts} == {Outcome.OK}, [
        verdict.message for verdict in run.verdicts if verdict.outcome is not Outcome.OK][:3]
