"""Invalid requests derived from the request schemas: every constraint of every request schema yields a violation
that breaks it and nothing else; the reference server refuses exactly what the schemas forbid (at MUST and SHOULD)
over generated bodies, valid and invalid; `lmconform fuzz --list-violations` lists them with their sources; and
docs/schemas.md lists every constraint as the schemas state it."""

from __future__ import annotations

import copy
from pathlib import Path

import budget
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from lmconform.api_table import APIS
from lmconform.cases import load_cases
from lmconform.cli import main
from lmconform.fuzz.derived import schema_violations
from lmconform.fuzz.listing import constraints_markdown
from lmconform.reference.refusal import PROFILE, REFUSED_LEVELS
from lmconform.schemas import PAYLOAD_SCHEMAS, schema_set
from lmconform.schemas.constraints import constraints, request_apis
from lmconform.vocabulary import Level

ROOT = Path(__file__).resolve().parent.parent
EVERY_LEVEL = tuple(Level)
# Constraints inside an item no valid body the tests draw holds: native chat's plugin and MCP integrations (the
# written cases name integrations by id only, and an item made for the violation lacks its `type`).
NO_BODY_HOLDS = {"native_chat/request.json#/$defs/integration/then/properties/allowed_tools/type",
                 "native_chat/request.json#/$defs/integration/then/properties/allowed_tools/items/type",
                 "native_chat/request.json#/$defs/integration/then/properties/headers/type"}


def written_bodies(api: str) -> list[dict]:
    """The bodies of `api`'s written valid cases, the model filled in."""
    return [{"model": "m", **case.body} for case in load_cases(api)
            if case.valid and case.source is None and isinstance(case.body, dict) and not case.turns]


def valid_bodies(api: str) -> st.SearchStrategy[dict]:
    """Valid requests of `api`: its generated ones where its folder generates them, and its written valid cases'
    bodies, so that every member a constraint speaks of is there in some body."""
    written = written_bodies(api)
    fuzz = APIS[api].room("fuzz")
    strategies = [st.sampled_from(written)] if written else []
    return st.one_of(*strategies, *([fuzz.BODIES] if fuzz is not None else []))


def drawn(api: str, violation, bodies: st.SearchStrategy[dict] | None = None) -> st.SearchStrategy[tuple[dict, dict]]:
    """A valid body (of `bodies`, else of valid_bodies) and the violation made of it."""
    bodies = valid_bodies(api) if bodies is None else bodies

    def made(draw) -> tuple[dict, dict]:
        valid = draw(bodies)
        return valid, violation(draw, copy.deepcopy(valid))

    return st.composite(made)()


BREAKS_ALONE_EXAMPLES = budget.examples(10)


@pytest.mark.parametrize("api", request_apis())
def test_every_constraint_of_every_request_schema_yields_a_violation_that_breaks_it_alone(api):
    unbroken = []
    for violation in schema_violations(api, None, EVERY_LEVEL):
        if violation.constraint.location in NO_BODY_HOLDS:
            continue
        found = []

        @settings(max_examples=BREAKS_ALONE_EXAMPLES, database=None, deadline=None, derandomize=True,
                  phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
        @given(drawn(api, violation))
        def breaks_it(made):
            valid, body = made
            assert violation.breaks_only(body, violation.findings_of(valid))  # noqa: B023 - called at once
            found.append(body)  # noqa: B023

        try:
            breaks_it()
        except Exception as error:  # hypothesis found no body the violation could be applied to
            unbroken.append(f"{violation.name} ({violation.constraint.location}): {type(error).__name__}")
            continue
        if not found:
            unbroken.append(f"{violation.name} ({violation.constraint.location}): never drawn")
    assert not unbroken, unbroken
    assert {violation.constraint for violation in schema_violations(api, None, EVERY_LEVEL)} == set(constraints(api))


AGREEMENT_EXAMPLES = budget.examples(300)


@pytest.mark.parametrize("api", request_apis())
def test_the_reference_server_refuses_exactly_what_the_request_schema_forbids(client, api):
    """Valid bodies and bodies with one derived violation of any level, each sent to the reference server: refused
    (4xx) exactly when its request schema, as the reference profile reads it, finds something at MUST or SHOULD."""
    schemas, path = schema_set(PROFILE), PAYLOAD_SCHEMAS[(api, "request")]
    violations = schema_violations(api, PROFILE, EVERY_LEVEL)
    broken = st.sampled_from(violations).flatmap(lambda violation: drawn(api, violation)).map(lambda made: made[1])
    bodies = st.one_of(valid_bodies(api), broken)
    disagreements = []

    @settings(max_examples=AGREEMENT_EXAMPLES, database=None, deadline=None, derandomize=True,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
    @given(bodies)
    def agree(body):
        forbidden = [finding for finding in schemas.findings(path, body) if finding.level in REFUSED_LEVELS]
        answer = client.post(APIS[api].path, json=body)
        if bool(forbidden) != (400 <= answer.status_code < 500):
            disagreements.append((answer.status_code, answer.text[:200], [f.schema for f in forbidden], body))

    agree()
    assert not disagreements, disagreements[:3]


@pytest.mark.parametrize("api", request_apis())
def test_the_fast_answer_at_must_and_should_agrees_with_jsonschema(api):
    """The reference server asks the schemas only whether a request breaks something at MUST or SHOULD, which a
    compiled copy without the INFO subschemas answers for most requests (lmconform.schemas.grading.above_info). What
    it accepts, jsonschema must find nothing at those levels in, over valid bodies and violations of every level."""
    path = PAYLOAD_SCHEMAS[(api, "request")]
    for profile in (PROFILE, None):
        schemas = schema_set(profile)
        schemas.valid(path, {}, REFUSED_LEVELS)
        assert schemas._fast[(path, False)] is not None, f"{profile} {path}: no fast path at MUST and SHOULD"
        violations = schema_violations(api, profile, EVERY_LEVEL)
        broken = st.sampled_from(violations).flatmap(lambda violation: drawn(api, violation)).map(lambda made: made[1])
        wrong = []

        @settings(max_examples=budget.examples(150), database=None, deadline=None, derandomize=True,
                  phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
        @given(st.one_of(valid_bodies(api), broken))
        def agree(body):
            if schemas.valid(path, body, REFUSED_LEVELS):  # noqa: B023 - called at once
                found = [f.schema for f in schemas.findings(path, body) if f.level in REFUSED_LEVELS]  # noqa: B023
                if found:
                    wrong.append((found, body))  # noqa: B023

        agree()
        assert not wrong, wrong[:3]


def test_a_responses_tool_without_strict_is_answered_by_the_fast_path_at_must_and_should():
    schemas, path = schema_set(PROFILE), PAYLOAD_SCHEMAS[("responses", "request")]
    body = {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]}
    assert [finding.level for finding in schemas.findings(path, body)] == [Level.INFO]
    assert schemas.valid(path, body) is None and schemas.valid(path, body, REFUSED_LEVELS) is True
    assert schemas.findings(path, body, REFUSED_LEVELS) == []
    body["tools"][0]["name"] = "not a name"  # off the pattern: MUST, whatever the fast path says
    assert schemas.valid(path, body, REFUSED_LEVELS) is None
    assert {finding.keyword for finding in schemas.findings(path, body, REFUSED_LEVELS)} == {"pattern"}


@pytest.mark.parametrize("api", request_apis())
def test_list_violations_prints_each_constraint_with_its_level_and_source(api, capsys):
    assert main(["fuzz", "--list-violations", api]) == 0
    printed = capsys.readouterr().out
    for constraint in constraints(api):
        assert f"{constraint.level.value:<6} {constraint.name}" in printed
    assert "docs/schemas.md" in printed


def test_list_violations_of_an_api_without_a_request_schema_is_a_usage_error(capsys):
    assert main(["fuzz", "--list-violations", "models"]) == 2
    assert "models" in capsys.readouterr().err


def test_docs_list_every_constraint_of_every_request_schema_as_the_schemas_state_them():
    text = (ROOT / "docs" / "schemas.md").read_text()
    assert constraints_markdown() in text, "docs/schemas.md is behind the schemas: run python -m tools.constraints"


def test_a_value_a_profile_allows_is_never_sent_as_a_violation_of_it():
    """LM Studio documents `max_tokens: -1` as no limit (its profile's dialect): held to OpenAI's reading, -1 is one
    of the plainest values below max_tokens' minimum; held to LM Studio's, it is never drawn as a violation."""

    def values(profile: str | None) -> set:
        [violation] = [violation for violation in schema_violations("chat", profile)
                       if violation.constraint.member == "max_tokens" and violation.constraint.keyword == "minimum"]
        seen = set()

        @settings(max_examples=200, database=None, deadline=None, derandomize=True, phases=(Phase.generate,),
                  suppress_health_check=list(HealthCheck))
        # Of the written bodies: the value drawn for max_tokens is the point, and a generated body costs ten times
        # as much to draw.
        @given(drawn("chat", violation, st.sampled_from(written_bodies("chat"))))
        def collect(made):
            seen.add(made[1]["max_tokens"])

        collect()
        return seen

    assert -1 in values(None) and 0 in values(None)
    assert -1 not in values("lmstudio") and 0 in values("lmstudio")
