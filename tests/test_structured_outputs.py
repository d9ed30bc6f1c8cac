"""Answers asked for under a JSON Schema, held to it keyword by keyword, and the keyword matrix: what the reference
server does with each family (enforced or refused, clean; ignored under its faults), the grade in the results row,
and the matrix pages reading it (records written before it included) beside the tool-type matrix."""

import json

import pytest

from lmconform.reference import ReferenceServer
from lmconform.reference.instances import BOUNDS, breaking, example, unhonoured
from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.run import run_suite
from lmconform.schemas.answers import NotASchema, breaches
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.verdicts.records import load_results

GRADE = "generation.structured_output.keyword_grade"
TOOL_TYPE = "responses.tools.type_graded"  # the tool-type matrix's check, whose grades the same pages show
HOUR = {"type": "object", "properties": {"hour": {"type": "integer", "minimum": 0, "maximum": 23}},
        "required": ["hour"], "additionalProperties": False}


def test_a_breach_names_the_keyword_and_the_pointer_into_the_answer():
    found = breaches({"hour": 25, "minute": 0}, HOUR)
    assert [(breach.keyword, breach.pointer) for breach in found] == [("maximum", "/hour"),
                                                                      ("additionalProperties", "")]
    assert str(found[0]) == "`maximum` at /hour: a number ≤ 23, not 25 (integer)"
    assert [(b.keyword, b.pointer) for b in breaches({}, HOUR)] == [("required", "/hour")]
    assert breaches({"day": "Christmas"}, {"properties": {"day": {"format": "date"}}})[0].keyword == "format"
    with pytest.raises(NotASchema):
        breaches({}, {"type": "no such type"})


def test_the_reference_model_answers_inside_a_schema_or_names_the_keyword_it_cannot_honour():
    tree = {"$ref": "#/$defs/node", "$defs": {"node": {
        "type": "object", "required": ["name", "children"],
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}
    assert breaches(example(tree, "Paris"), tree) == []  # a recursive schema ends
    assert example(HOUR, "Paris") == {"hour": 0}
    assert unhonoured(HOUR, "Paris") is None
    code = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
    assert unhonoured(code, "Paris") == "JSON Schema keyword 'pattern' (at /code) is not supported in a structured output"


def test_a_fault_breaks_the_schema_or_only_its_bounds():
    assert breaches(breaking(HOUR, "Paris"), HOUR)
    bounded = {"type": "object", "properties": {"unit": {"enum": ["C", "F"]}, "hour": HOUR["properties"]["hour"]}}
    answer = breaking(bounded, "Paris", BOUNDS)
    assert {breach.keyword for breach in breaches(answer, bounded)} <= BOUNDS and answer["unit"] == "C"


def grades(base_url: str) -> dict[str, dict]:
    run = run_suite(Target(base_url=base_url), apis=("chat",), include=[GRADE], settings=RunSettings(fuzz_examples=0))
    rows = [verdict.record() for verdict in run.verdicts]
    return {row["schema_keyword"]["family"]: row for row in rows}


@pytest.fixture(scope="module")
def server():
    with ReferenceServer() as running:
        yield running


def test_the_clean_reference_server_enforces_or_refuses_each_keyword_and_its_faults_ignore_them(server):
    clean = grades(server.base_url)
    assert len(clean) == 21 and {row["outcome"] for row in clean.values()} == {"OK"}
    assert clean["pattern"]["schema_keyword"]["grade"] == "refused"
    assert "names the keyword" in clean["pattern"]["schema_keyword"]["evidence"]
    assert clean["enum"]["schema_keyword"]["grade"] == "enforced"
    ignored = grades(f"{server.base_url}/faults/structured-output-off-schema")
    assert {row["schema_keyword"]["grade"] for row in ignored.values()} == {"ignored"}
    assert {row["outcome"] for row in ignored.values()} == {"INFO"}
    dropped = grades(f"{server.base_url}/faults/schema-bounds-dropped")
    assert dropped["minimum/maximum"]["schema_keyword"]["grade"] == "ignored"
    assert dropped["enum"]["schema_keyword"]["grade"] == "enforced"
    assert "`maximum` at /n" in dropped["minimum/maximum"]["schema_keyword"]["evidence"]


def test_the_matrix_shows_each_grade_with_its_evidence_and_reads_older_records(tmp_path):
    def record(label, rows):
        return {"lmconform": "0.1.0", "target": {"url": f"http://{label}", "label": label}, "results": rows}

    def row(grade):
        return {"case": "chat/schema-keyword-pattern", "check": GRADE, "level": "INFO", "outcome": "OK",
                "pass_k": "3/3", "schema_keyword": {"family": "pattern", "grade": grade, "evidence": "<b>said</b>"}}

    paths = []
    for label, rows in (("grammar", [row("enforced")]), ("older", [{k: v for k, v in row("x").items()
                                                                     if k not in ("schema_keyword", "pass_k")}])):
        paths.append(tmp_path / f"{label}.json")
        paths[-1].write_text(json.dumps(record(label, rows)))
    matrix = build_matrix(load_results(paths))
    markdown = render_markdown(matrix)
    assert "| `pattern` | ✓ enforced (pass^k 3/3) |  |" in markdown
    assert "&lt;b&gt;said&lt;/b&gt;" in render_html(matrix) and "<b>said</b>" not in render_html(matrix)
    no_grades = build_matrix(load_results(paths[1:]))
    assert "Does it enforce my schema?" not in render_markdown(no_grades)


def test_the_matrix_shows_the_tool_types_beside_the_keywords(tmp_path):
    def row(check, member, family, grade):
        return {"case": "responses/x", "check": check, "level": "MUST", "outcome": "OK",
                member: {"family": family, "grade": grade, "evidence": "<i>why</i>"}}

    rows = [row(GRADE, "schema_keyword", "enum", "enforced"),
            row(TOOL_TYPE, "tool_type", "namespace", "honoured"), row(TOOL_TYPE, "tool_type", "custom", "refused")]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"lmconform": "0.1.0", "target": {"url": "http://a", "label": "a"}, "results": rows}))
    matrix = build_matrix(load_results([path]))
    markdown = render_markdown(matrix)
    assert markdown.index("Does it enforce my schema?") < markdown.index("Does it take Codex's tool types?")
    assert "| `namespace` | ✓ honoured |" in markdown and "| `custom` | ⊘ refused |" in markdown
    assert "| `enum` | ✓ enforced |" in markdown and "| Tool type |" in markdown
    page = render_html(matrix)
    assert 'id="tool-types"' in page and "&lt;i&gt;why&lt;/i&gt;" in page and "<i>why</i>" not in page
