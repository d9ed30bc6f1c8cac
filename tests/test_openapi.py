"""`lmconform openapi`: an OpenAPI 3.1 document assembled from the schemas, valid for a well-kept validator, with
every schema a component and every operation's bodies, stream and errors named."""

import json

import budget
import pytest
from openapi_spec_validator import validate

from lmconform.api_table import APIS
from lmconform.cli import main
from lmconform.openapi import component_name, document
from lmconform.schemas import BASE_URI, PROFILE_OVERLAYS, schema_paths
from lmconform.vocabulary import Level


def test_the_command_writes_a_valid_openapi_3_1_document(tmp_path, capsys):
    written = tmp_path / "openapi.json"
    assert main(["openapi", "-o", str(written)]) == 0
    spec = json.loads(written.read_text())
    validate(spec)
    assert spec["openapi"] == "3.1.0"
    assert set(spec["components"]["schemas"]) == {component_name(BASE_URI + path) for path in schema_paths()}
    chat = spec["paths"][APIS["chat"].path]["post"]
    assert chat["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/chat.request"}
    streamed = chat["responses"]["200"]["content"]["text/event-stream"]
    assert streamed["x-lmconform-event-schema"] == {"$ref": "#/components/schemas/chat.stream-payload"}
    assert spec["paths"][APIS["models"].path]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == \
        {"$ref": "#/components/schemas/models.list"}
    assert "/v1/responses/{response_id}" in spec["paths"]


@pytest.mark.parametrize(("profile", "level"), budget.pairs(list(PROFILE_OVERLAYS), list(Level)),
                         ids=lambda value: str(getattr(value, "value", value)))
def test_every_profile_and_level_gives_a_valid_document(profile, level):
    validate(document(profile, level))


def test_a_level_keeps_only_the_requirements_at_least_that_strict():
    full, strict = document(None, Level.INFO), document(None, Level.MUST)
    text = json.dumps(strict["components"]["schemas"])
    assert '"x-lmconform-level": "SHOULD"' not in text and '"x-lmconform-level": "INFO"' not in text
    assert strict["components"]["schemas"]["common.usage"] is True  # SHOULD at its root
    assert "created" in full["components"]["schemas"]["chat.chunk"]["properties"]
    assert strict["components"]["schemas"]["chat.chunk"]["properties"]["created"] is True


def test_the_lmstudio_profile_reads_lm_studios_dialect():
    base, lmstudio = document(None), document("lmstudio")
    assert base["components"]["schemas"]["models.list"] != lmstudio["components"]["schemas"]["models.list"]


def test_an_unwritable_output_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["openapi", "-o", str(tmp_path / "file" / "openapi.json")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_without_output_the_document_goes_to_stdout(capsys):
    assert main(["openapi", "--profile", "lmstudio", "--level", "SHOULD"]) == 0
    assert json.loads(capsys.readouterr().out)["openapi"] == "3.1.0"
