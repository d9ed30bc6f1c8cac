"""The table of APIs (lmconform.api_table) is the one list: every API in it has cases, a suite and, if it answers with a
generation, a normaliser that reads the reference server's answers (the reference bridge's, over stdio); every cases
folder is in it."""

import importlib
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import budget
import processes
import pytest

from lmconform.api_table import APIS, STDIO
from lmconform.cases import CASES_DIR, cases_folder, load_cases
from lmconform.checks import REGISTRY, refs
from lmconform.normalize.events import Generation, Text, ToolCallStarted
from lmconform.normalize.reading import reading
from lmconform.run import Run
from lmconform.run.plan import embedded_bridge
from lmconform.target import Target
from lmconform.vocabulary import Outcome

ROOT = Path(__file__).resolve().parent.parent


def test_every_api_folder_is_an_api_of_the_table():
    assert {folder.name for folder in CASES_DIR.iterdir() if folder.is_dir() and folder.name != "__pycache__"} == set(APIS)


@pytest.mark.parametrize("api", APIS)
def test_every_api_has_cases_and_a_suite(api):
    assert load_cases(api), f"no cases for {api} in {cases_folder(CASES_DIR, api)}"
    assert callable(getattr(importlib.import_module("lmconform.suites.test_apis"), f"test_{api}", None))


@pytest.mark.parametrize("api", [name for name in APIS if reading(name).generates])
def test_a_generating_api_normalises_the_reference_servers_answers(server, api):
    if APIS[api].transport == STDIO:
        run = Run(Target(base_url="", bridge_command=embedded_bridge(), bridge_model="lmconform-bridge"))
    else:
        run = Run(Target(base_url=server.base_url, model="lmconform-reference"))
    # A coding agent's case is played only when the run runs its agent (tests/test_agents.py); a case of the Responses
    # API's WebSocket mode is messages on a socket, which its own checks read (tests/test_websocket.py).
    generations = [reading(api).generation(run.observe(case).exchange) for case in load_cases(api)
                   if not case.invalid and case.agent is None and case.websocket is None]
    assert generations and all(isinstance(generation, Generation) for generation in generations)
    events = [event for generation in generations for event in generation.events]
    assert any(isinstance(event, Text) for event in events)
    if any(case.tools for case in load_cases(api)):  # an API whose cases offer tools: its calls are read too
        assert any(isinstance(event, ToolCallStarted) for event in events)


@pytest.mark.parametrize("api", [name for name, api in APIS.items() if api.optional])
@pytest.mark.parametrize("where", ["/faults/no-such-route", "/elsewhere"], ids=["404", "200-unexpected-endpoint"])
def test_a_target_without_the_route_gets_unsupported_not_failed(server, api, where):
    # An unknown fault prefix is answered 404; an unknown path 200 "Unexpected endpoint", as LM Studio before 0.4.1
    # answers /v1/messages.
    # Its generated cases send the budget's requests (tests/budget.py): each is answered as the others are.
    run = Run(Target(base_url=server.base_url + where, model="lmconform-reference"), settings=budget.suite_settings())
    outcomes = {verdict.outcome for case in load_cases(api) for check in REGISTRY.values() if check.applies(case)
                if (verdict := run.judge(case, check)) is not None}
    assert outcomes == {Outcome.UNSUPPORTED}


FAKE_API = Path(__file__).resolve().parent / "fake_api"


def test_each_source_is_declared_once_in_the_shared_module_or_one_api_folder():
    declared = Counter(name for api in APIS.values() for name in api.refs)
    assert [name for name, count in declared.items() if count > 1] == []
    assert not set(declared) & {name for name in vars(refs) if name.isupper()}
    assert all(isinstance(source, str) and source for api in APIS.values() for source in api.refs.values())


@pytest.mark.slow
def test_an_api_added_as_a_folder_and_one_line_of_the_table_runs_end_to_end(tmp_path):
    """A copy of lmconform with a made-up API (tests/fake_api: its entry, a case, schemas, a check, the reference
    server's door and a fault, the sources its check cites, the changes its schema rejects) in `apis/echo/` and
    `"echo",` in the table, and no other edit: the suite plays its case against the reference server, judges it by
    its check and the schema checks its entry names, its fault fails its check, and the headline has a line for it;
    its check's reference and its schema's mutations are read from its folder."""
    copy = tmp_path / "lmconform"
    shutil.copytree(ROOT / "lmconform", copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(FAKE_API, copy / "apis" / "echo", ignore=shutil.ignore_patterns("__pycache__"))
    table = copy / "api_table.py"
    text = table.read_text()
    assert text.count('    "vscodelm",\n') == 1
    table.write_text(text.replace('    "vscodelm",\n', '    "vscodelm",\n    "echo",\n'))
    outcomes = {}
    for fault in (None, "echo-text-dropped", "echo-object-missing"):
        record = tmp_path / f"{fault or 'clean'}.json"
        finished = processes.run([sys.executable, "-m", "pytest", "--pyargs", "lmconform.suites", "-p",
                                  "no:cacheprovider", "-q", "-k", "test_echo", "--results-json", str(record),
                                  *(["--reference-fault", fault] if fault else [])],
                                 cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": str(tmp_path)})
        assert finished.returncode == (1 if fault else 0), finished.stdout[-3000:] + finished.stderr[-3000:]
        rows = json.loads(record.read_text())["results"]
        assert {row["case"] for row in rows} == {"echo/text"}
        outcomes[fault] = {row["check"]: row["outcome"] for row in rows}
        assert "\nEcho " in finished.stdout  # its surface's line of the headline, named from its entry
    assert {"echo.body.text_echoed", "schema.echo.answer.must", "http.status.success_for_valid_request"} \
        <= set(outcomes[None]) and set(outcomes[None].values()) == {"OK"}
    assert {check for check, outcome in outcomes["echo-text-dropped"].items() if outcome != "OK"} == {
        "echo.body.text_echoed"}
    assert {check for check, outcome in outcomes["echo-object-missing"].items() if outcome != "OK"} == {
        "schema.echo.answer.must"}
    # tests/test_schemas.py in the copy: the mutations of every API of its table, the echo API's among them.
    read = ("import copy, json\n"
            "from test_schemas import MUTATIONS, graded_change\n"
            "from lmconform.checks import REGISTRY\n"
            "echo = [mutation for mutation in MUTATIONS if mutation.api == 'echo']\n"
            "print(json.dumps([REGISTRY['echo.body.text_echoed'].ref, [(mutation.test['description'], sorted(\n"
            "    str(level) for _, _, level in graded_change(mutation, copy.deepcopy(mutation.test['data']))[1]))\n"
            "    for mutation in echo]]))\n")
    finished = processes.run([sys.executable, "-c", read], cwd=tmp_path, timeout=120,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (tmp_path, ROOT / "tests", ROOT)))})
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert json.loads(finished.stdout) == ["tests/fake_api/checks/echo.py", [["text is a number", ["MUST"]]]]
