"""The parameter matrix (generation.parameter.grade): each optional parameter of chat completions, the Responses API,
the Messages API and LM Studio's native chat, sent alone (`seed` sent twice, its answers compared; `n` streamed as
well as not), is honoured by the clean reference server; a parameter it must honour and a fault ignores is graded
ignored (and fails), one a fault refuses is graded refused (and http.status.success_for_valid_request reports it);
the matrix pages show the grades in a section of their own."""

from __future__ import annotations

import json

import pytest
from graded_rows import graded_by_family, played_rows

from lmconform.cases import load_cases
from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.verdicts.records import load_results

GRADE = "generation.parameter.grade"
STATUS = "http.status.success_for_valid_request"
APIS = ("chat", "responses", "messages", "native_chat")
CASES = {f"{case.api}: {case.parameter}{' (streamed)' if case.streamed else ''}": case.id
         for api in APIS for case in load_cases(api) if case.parameter}
# Each fault, and the parameters it ignores or refuses.
IGNORED_BY = {"stop-ignored": ["chat: stop"], "n-ignored": ["chat: n", "chat: n (streamed)"],
              "seed-ignored": ["chat: seed"], "parallel-calls-ignored": ["chat: parallel_tool_calls"],
              "messages-parallel-not-disabled": ["messages: tool_choice.disable_parallel_tool_use"]}
REFUSED_BY = {"responses-prompt-cache-key-refused": "responses: prompt_cache_key",
              "responses-reasoning-effort-refused": "responses: reasoning.effort"}


def rows(base_url: str) -> list[dict]:
    return played_rows(base_url, APIS, CASES.values(), (GRADE, STATUS))


def grades(found: list[dict]) -> dict[str, dict]:
    return graded_by_family(found, GRADE, "parameter")


def test_each_api_has_its_parameters():
    assert {family.split(":")[0] for family in CASES} == set(APIS) and len(CASES) == 25


def test_the_clean_reference_server_honours_every_parameter(server):
    clean = rows(server.base_url)
    assert {family: row["parameter"]["grade"] for family, row in grades(clean).items()} == \
        dict.fromkeys(CASES, "honoured")
    assert {row["outcome"] for row in clean} == {"OK"}
    evidence = {family: row["parameter"]["evidence"] for family, row in grades(clean).items()}
    assert "2 choices" in evidence["chat: n"] and "ends before 'Paris'" in evidence["chat: stop"]
    assert "2 streamed choices, indexes 0 to 1, each ending ('stop', 'stop')" in evidence["chat: n (streamed)"]
    assert "echoes `prompt_cache_key`" in evidence["responses: prompt_cache_key"]
    assert "sent again gets the same answer" in evidence["chat: seed"]


@pytest.mark.parametrize("fault", sorted(IGNORED_BY))
def test_a_parameter_ignored_is_graded_ignored_and_fails(server, fault):
    found = rows(f"{server.base_url}/faults/{fault}")
    ignored = {family: row for family, row in grades(found).items() if row["parameter"]["grade"] != "honoured"}
    assert sorted(ignored) == IGNORED_BY[fault]
    for family, row in ignored.items():
        assert row["parameter"]["grade"] == "ignored" and row["outcome"] == "NON-STRICT"  # a SHOULD, failed
        assert f"as `{family}` asks" in row["message"]


@pytest.mark.parametrize("fault", sorted(REFUSED_BY))
def test_a_parameter_refused_is_graded_refused(server, fault):
    found = rows(f"{server.base_url}/faults/{fault}")
    refused = {family for family, row in grades(found).items() if row["parameter"]["grade"] == "refused"}
    assert refused == {REFUSED_BY[fault]}
    assert "Unrecognized request argument" in grades(found)[REFUSED_BY[fault]]["parameter"]["evidence"]
    assert [row["case"] for row in found if row["check"] == STATUS and row["outcome"] == "FAILED"] == \
        [CASES[REFUSED_BY[fault]]]


def test_the_matrix_shows_the_parameters_in_a_section_of_their_own(tmp_path):
    row = {"case": "chat/parameter-n", "check": GRADE, "level": "SHOULD", "outcome": "NON-STRICT",
           "parameter": {"family": "chat: n", "grade": "ignored", "evidence": "accepted, and no <b>choice</b>"}}
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"lmconform": "0.1.0", "target": {"url": "http://server", "label": "server"},
                                "results": [row]}))
    matrix = build_matrix(load_results([path]))
    markdown = render_markdown(matrix)
    assert "## Which parameters does it honour?" in markdown and "| `chat: n` | ✗ ignored |" in markdown
    assert "Does it take what Claude Code sends?" not in markdown
    assert "accepted, and no &lt;b&gt;choice&lt;/b&gt;" in render_html(matrix)
