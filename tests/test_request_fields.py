"""The matrix of the fields Claude Code sends (messages.request_field.grade): the clean reference server honours each,
each field's refusal fault refuses its case alone (and http.status.success_for_valid_request reports it), adaptive
thinking read as off is graded ignored; the matrix pages show the grades in a section of their own."""

from __future__ import annotations

import json

import pytest
from graded_rows import graded_by_family, played_rows

from lmconform.apis.messages.reference.fields import FIELD_REFUSALS
from lmconform.cases import load_cases
from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.run.play import play
from lmconform.target import Target
from lmconform.verdicts.records import load_results

GRADE = "messages.request_field.grade"
STATUS = "http.status.success_for_valid_request"
FIELDS = {case.request_field: case.id for case in load_cases("messages") if case.request_field}
# The fault that refuses each field: the table's, and the two faults that refused a field before the matrix.
REFUSED_BY = {"messages-system-turn-refused": "system turn after the user's",
              "messages-thinking-input-refused": "thinking block passed back"}


def rows(base_url: str) -> list[dict]:
    return played_rows(base_url, ("messages",), FIELDS.values(), (GRADE, STATUS))


def grades(found: list[dict]) -> dict[str, dict]:
    return graded_by_family(found, GRADE, "request_field")


def test_every_field_of_the_matrix_has_its_case():
    assert len(FIELDS) == 10


def test_the_clean_reference_server_honours_every_field(server):
    clean = rows(server.base_url)
    assert {row["request_field"]["grade"] for row in grades(clean).values()} == {"honoured"}
    assert set(grades(clean)) == set(FIELDS) and {row["outcome"] for row in clean} == {"OK"}
    assert "a thinking block comes first" in grades(clean)["thinking: adaptive"]["request_field"]["evidence"]


@pytest.mark.parametrize("fault", sorted([*FIELD_REFUSALS, *REFUSED_BY]))
def test_each_refusal_fault_refuses_its_field_alone(server, fault):
    found = rows(f"{server.base_url}/faults/{fault}")
    refused = {family for family, row in grades(found).items() if row["request_field"]["grade"] == "refused"}
    assert len(refused) == 1 and refused == {REFUSED_BY.get(fault, next(iter(refused)))}
    (case,) = {FIELDS[family] for family in refused}
    assert [row["case"] for row in found if row["check"] == STATUS and row["outcome"] == "FAILED"] == [case]


def test_the_beta_flags_go_in_the_header_and_their_refusal_is_litellms(server):
    (case,) = [case for case in load_cases("messages") if case.id == FIELDS["anthropic-beta header"]]
    clean = play(case, Target(base_url=server.base_url, model="lmconform-reference"))
    assert "mid-conversation-tool-changes-2026-07-01" in clean.exchange.request.headers["anthropic-beta"]
    assert clean.exchange.status == 200
    refused = play(case, Target(base_url=f"{server.base_url}/faults/messages-beta-header-refused",
                                model="lmconform-reference"))
    assert refused.exchange.status == 400 and refused.exchange.json["error"]["message"] == "invalid beta flag"


def test_adaptive_thinking_read_as_off_is_graded_ignored(server):
    found = grades(rows(f"{server.base_url}/faults/messages-adaptive-thinking-ignored"))
    ignored = found.pop("thinking: adaptive")
    assert ignored["request_field"]["grade"] == "ignored" and ignored["outcome"] == "INFO"
    assert {row["request_field"]["grade"] for row in found.values()} == {"honoured"}


def test_the_matrix_shows_the_fields_in_a_section_of_their_own(tmp_path):
    row = {"case": "messages/field-metadata", "check": GRADE, "level": "INFO", "outcome": "OK",
           "request_field": {"family": "metadata", "grade": "refused", "evidence": "HTTP 400: <b>metadata</b>"}}
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"lmconform": "0.1.0", "target": {"url": "http://server", "label": "server"},
                                "results": [row]}))
    matrix = build_matrix(load_results([path]))
    markdown = render_markdown(matrix)
    assert "## Does it take what Claude Code sends?" in markdown and "| `metadata` | ⊘ refused |" in markdown
    assert "Does it enforce my schema?" not in markdown
    assert "HTTP 400: &lt;b&gt;metadata&lt;/b&gt;" in render_html(matrix)
