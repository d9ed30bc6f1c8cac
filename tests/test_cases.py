"""Every case file is valid against its schema and follows the description rules of the house."""

import json
import re

import jsonschema
import pytest

from lmconform.cases import CASE_SCHEMA, CaseError, HttpTurn, StdioTurn, case_file, case_files, load_case, load_cases
from lmconform.cases.reader import api_of_file

CASE_FILES = case_files()
FORBIDDEN = re.compile(r"\b(should|test that)\b", re.IGNORECASE)


def test_the_case_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(CASE_SCHEMA.read_text()))


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: f"{api_of_file(p)}/{p.stem}")
def test_case_file_is_valid(path):
    case = load_case(path)
    assert case.id == f"{api_of_file(path)}/{path.stem}"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", case.slug), "slugs are kebab case"
    assert not FORBIDDEN.search(case.description), "descriptions state what the case is, without 'should'"


def test_descriptions_are_unique():
    descriptions = [load_case(path).description for path in CASE_FILES]
    assert len(descriptions) == len(set(descriptions))


def test_every_api_folder_has_cases():
    assert {"chat", "models"} <= {api_of_file(path) for path in CASE_FILES}
    assert len(load_cases("chat")) >= 10


@pytest.mark.parametrize(
    "broken, complaint",
    [
        ({"description": "a request", "provenance": {"source": "doc"}, "expect": {"status": "success"}}, "request"),
        ({"description": "a valid description", "provenance": {}, "request": {"method": "GET", "path": "/v1/models"},
          "expect": {"status": "success"}}, "source"),
        ({"description": "a valid description", "provenance": {"source": "doc"},
          "request": {"method": "GET", "path": "/models"}, "expect": {"status": "success"}}, "does not match"),
        ({"description": "a valid description", "provenance": {"source": "doc"},
          "request": {"method": "GET", "path": "/v1/models"}, "expect": {"status": "fine"}}, "is not one of"),
    ],
)
def test_a_broken_case_is_refused_with_the_reason(tmp_path, broken, complaint):
    path = tmp_path / "chat" / "broken.json"
    path.parent.mkdir()
    path.write_text(json.dumps(broken))
    with pytest.raises(CaseError, match=complaint):
        load_case(path)


@pytest.mark.parametrize("name", ["x-api-key", "Authorization", "cookie"])
def test_a_case_never_carries_a_credential_among_its_headers(tmp_path, name):
    path = tmp_path / "messages" / "credential.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"description": "a valid description", "provenance": {"source": "doc"},
                                "request": {"method": "POST", "path": "/v1/messages", "headers": {name: "sk-1"},
                                            "body": {}}, "expect": {"status": "success"}}))
    with pytest.raises(CaseError, match=f"a case never carries a credential \\({name}\\)"):
        load_case(path)


def test_a_case_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "chat" / "broken.json"
    path.parent.mkdir()
    path.write_text("{")
    with pytest.raises(CaseError, match="not JSON"):
        load_case(path)



def test_a_case_gives_its_turns_as_those_of_its_transport_and_refuses_another():
    over_http = load_case(case_file("responses/continue-loop"))
    over_stdio = load_case(case_file("vscodelm/cancel-while-streaming"))
    assert over_http.turns_of(HttpTurn) == over_http.turns and over_http.turns
    assert over_stdio.turns_of(StdioTurn) == over_stdio.turns and over_stdio.turns
    with pytest.raises(TypeError, match="responses/continue-loop has turns of another transport than StdioTurn"):
        over_http.turns_of(StdioTurn)


def test_only_a_coding_agents_case_gives_an_agent_task():
    assert load_case(case_file("chat/agent-opencode")).agent_task.name == "opencode"
    written = load_case(case_file("responses/continue-loop"))
    with pytest.raises(ValueError, match="responses/continue-loop is no coding agent's task"):
        assert written.agent_task is None
