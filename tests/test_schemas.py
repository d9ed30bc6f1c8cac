"""The wire schemas themselves: valid Draft 2020-12 under every profile, every reference resolved, every level one
of ours; every answer of the reference server valid under every profile; the real servers' captured answers giving
exactly the schema verdicts their expected-verdict files list; and every schema rejecting a mutation of a real
sample, at the level it grades what the mutation broke."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from lmconform.api_entry import Api
from lmconform.api_table import APIS
from lmconform.checks.evaluate import evaluate
from lmconform.checks.registry import REGISTRY
from lmconform.checks.schema import OBJECTS, api_object_exchanges
from lmconform.expectations import Expectations
from lmconform.profiles import FAMILIES
from lmconform.run import run_suite
from lmconform.schemas import (
    BASE_URI,
    LEVEL_KEY,
    PAYLOAD_SCHEMAS,
    PROFILE_OVERLAYS,
    OverlayError,
    base_documents,
    event_schemas,
    schema_for,
    schema_paths,
    schema_set,
    validate,
)
from lmconform.schemas.documents import overlay, overlay_names, patched
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Level
from tools.targets import differences, load_target_file, table
from tools.targets.captures import CAPTURES, TARGET_FILES, captures, provenance, replayed

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "docs" / "schemas.md"
LENIENCY = (Level.MUST, Level.SHOULD, Level.INFO)


# --- the documents ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", list(PROFILE_OVERLAYS), ids=str)
def test_every_schema_is_draft_2020_12_under_every_profile(profile):
    schemas = schema_set(profile)
    assert set(schemas.documents) == {BASE_URI + path for path in schema_paths()}
    for uri, document in schemas.documents.items():
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema", uri
        Draft202012Validator.check_schema(document)


def _nodes(node: Any, where: str = ""):
    if isinstance(node, dict):
        yield where, node
        for key, child in node.items():
            if key not in ("const", "enum", "examples", "default"):
                yield from _nodes(child, f"{where}/{key}")
    elif isinstance(node, list):
        for position, child in enumerate(node):
            yield from _nodes(child, f"{where}/{position}")


@pytest.mark.parametrize("profile", list(PROFILE_OVERLAYS), ids=str)
def test_every_reference_resolves_and_every_level_is_ours(profile):
    schemas = schema_set(profile)
    broken = []
    for uri, document in schemas.documents.items():
        resolver = schemas.registry.resolver(base_uri=uri)
        for where, node in _nodes(document):
            if isinstance(node.get("$ref"), str):
                try:
                    resolver.lookup(node["$ref"])
                except Exception as error:  # noqa: BLE001 - every kind of failure is a broken reference
                    broken.append(f"{uri}#{where}: {node['$ref']} ({type(error).__name__})")
            if LEVEL_KEY in node:
                assert node[LEVEL_KEY] in ("MUST", "SHOULD", "INFO"), f"{uri}#{where}"
    assert not broken


def test_every_fact_a_schema_cites_is_documented():
    defined = set(re.findall(r"^\| ([A-Z][0-9]+) \|", FACTS.read_text(), flags=re.MULTILINE))
    cited = {fact for document in [*base_documents().values(), *map(overlay, overlay_names())]
             for _, node in _nodes(document) for key in ("x-lmconform-facts", "facts")
             for fact in (node.get(key) if isinstance(node.get(key), list) else [])}
    assert cited and cited <= defined, f"undocumented facts: {sorted(cited - defined)}"


def test_every_overlay_fits_its_format_and_every_profile_has_its_overlays():
    assert set(FAMILIES) | {None} == set(PROFILE_OVERLAYS)
    for name in overlay_names():
        overlay(name)  # validated against overlays/overlay.schema.json
    assert {name for names in PROFILE_OVERLAYS.values() for name in names} == set(overlay_names())


def test_an_overlay_whose_base_changed_under_it_fails_to_load():
    documents = copy.deepcopy(base_documents())
    error = documents[BASE_URI + "chat/error.json"]["properties"]["error"]
    error["allOf"][0]["$anchor"] = "renamed"
    with pytest.raises(OverlayError, match="test|anchor"):
        patched(documents, "lmstudio")


# The VS Code language-model bridge answers JSON-RPC over stdio, which no wire schema describes: the hand-written
# checks of its surface judge it alone.
APIS_WITHOUT_SCHEMAS = {"vscodelm"}
# APIs whose events are told apart by `type`, each type's schema in the dispatcher's folder beside it; what else
# the folder holds.
EVENT_FOLDERS = {"responses": {"common.json", "event.json"}, "messages": {"event.json"},
                 "native_chat": {"event.json"}}


def test_the_payload_table_covers_every_api_and_event_file():
    assert {api for api, _ in PAYLOAD_SCHEMAS} == set(APIS) - APIS_WITHOUT_SCHEMAS
    assert {api for api, kind in PAYLOAD_SCHEMAS if kind == "body"} == set(APIS) - APIS_WITHOUT_SCHEMAS
    assert all(path in schema_paths() for path in PAYLOAD_SCHEMAS.values())
    assert {api for api in APIS if event_schemas(api)} == set(EVENT_FOLDERS)
    for api, others in EVENT_FOLDERS.items():
        folder = PAYLOAD_SCHEMAS[(api, "event")].rpartition("/")[0]
        events = {path for path in schema_paths() if path.startswith(folder + "/")}
        assert events - set(event_schemas(api).values()) == {f"{folder}/{name}" for name in others}
        assert set(event_schemas(api).values()) <= set(schema_paths())
    assert schema_for("responses", "event", {"type": "response.output_text.delta"}) == \
        "responses/events/output-text-delta.json"
    assert schema_for("responses", "event", {"type": "acme:thing"}) == "responses/events/event.json"
    assert schema_for("messages", "event", {"type": "content_block_delta"}) == \
        "messages/events/content-block-delta.json"
    assert schema_for("native_chat", "event", {"type": "message.delta"}) == "native_chat/events/delta.json"
    for api in ("messages", "native_chat"):  # an error event is the error body with its type
        assert schema_for(api, "event", {"type": "error"}) == PAYLOAD_SCHEMAS[(api, "error")]


def _object_schemas(kind: str, apis: list[str]) -> list[str]:
    paths = [PAYLOAD_SCHEMAS[(api, kind)] for api in apis if (api, kind) in PAYLOAD_SCHEMAS]
    if kind == "event":
        paths += sorted({path for api in apis for path in event_schemas(api).values()})
    return paths


@pytest.mark.parametrize("object_", OBJECTS, ids=lambda object_: object_.id)
def test_each_kind_of_object_has_a_check_per_level_its_schemas_grade(object_):
    apis = list(APIS) if object_.kind == "error" else [object_.id.split(".")[0]]
    graded = {level for profile in PROFILE_OVERLAYS for path in _object_schemas(object_.kind, apis)
              for level in schema_set(profile).levels(path)}
    assert set(object_.levels) == graded
    assert {f"schema.{object_.id}.{level.lower()}" for level in graded} <= set(REGISTRY)


# --- real samples: the reference server ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    api: str
    kind: str
    payload: Any
    case: str


def samples_of(observed_case) -> list[Sample]:
    """Every payload of a played case: the requests it sent and every JSON body and event of the answers that are
    the API's objects (not what a deletion or a list of input items answers)."""
    api, found = observed_case.case.api, []
    if api in APIS_WITHOUT_SCHEMAS:
        return found
    for _, exchange in api_object_exchanges(observed_case):
        if isinstance(exchange.request.body, dict) and (api, "request") in PAYLOAD_SCHEMAS:
            found.append(Sample(api, "request", exchange.request.body, observed_case.case.id))
        if exchange.status is None:
            continue
        if exchange.is_event_stream and exchange.status < 300:
            for event in exchange.sse.events:
                if event.data.strip() != "[DONE]":
                    found.append(Sample(api, "event", json.loads(event.data), observed_case.case.id))
        elif isinstance(exchange.json, dict):
            found.append(Sample(api, "error" if exchange.status >= 400 else "body", exchange.json,
                                observed_case.case.id))
    return found


@pytest.fixture(scope="module")
def reference_run(server):
    return run_suite(Target(base_url=server.base_url, profile="reference"), include=["schema.*"],
                     settings=RunSettings(fuzz_examples=0))


@pytest.fixture(scope="module")
def reference_samples(reference_run) -> list[Sample]:
    return [sample for seen in reference_run.observations().values() for sample in samples_of(seen)]


# The reference server answers as LM Studio does, which OpenAI's reference (the profile-less schemas) grades so:
REFERENCE_DIALECT = {
    ("chat", "error", "/error", "type", Level.INFO),  # LM Studio's bare-string chat error
    ("models", "body", "/data/0/created", "required", Level.SHOULD),  # LM Studio's model entries have no `created`
    ("responses", "error", "/error/param", "pattern", Level.INFO),  # Zod's issue path, `tools.0.name`
}


def test_every_answer_of_the_reference_server_validates_under_every_profile(reference_samples):
    answers = [sample for sample in reference_samples if sample.kind != "request"]
    assert {(sample.api, sample.kind) for sample in answers} == \
        {key for key in PAYLOAD_SCHEMAS if key[1] != "request"}
    for profile in PROFILE_OVERLAYS:
        found = {(sample.api, sample.kind, finding.pointer, finding.keyword, finding.level)
                 for sample in answers for finding in validate(sample.api, sample.kind, sample.payload, profile)}
        if profile == "lmstudio":
            found = {finding for finding in found if not _echoes_a_tool_type_lmstudio_refuses(finding)}
        assert found == (REFERENCE_DIALECT if profile is None else set()), profile


def _echoes_a_tool_type_lmstudio_refuses(finding: tuple) -> bool:
    """The reference server takes Responses' tool types as OpenAI does (namespace, custom, hosted tools) and echoes
    them in `tools`; LM Studio's profile (overlays/lmstudio-tool-types.json) grades them INFO there."""
    api, _, pointer, _, level = finding
    return api == "responses" and re.fullmatch(r"(/response)?/tools/\d+/type", pointer) is not None \
        and level is Level.INFO


def test_the_reference_servers_clean_run_has_no_schema_finding(reference_run):
    assert reference_run.verdicts and {str(verdict.outcome) for verdict in reference_run.verdicts} == {"OK"}
    assert {verdict.check.id.rsplit(".", 1)[0] for verdict in reference_run.verdicts} == \
        {f"schema.{object_.id}" for object_ in OBJECTS}


def test_the_requests_of_valid_cases_have_no_must_finding(reference_run):
    for seen in reference_run.observations().values():
        if seen.case.valid and isinstance(seen.exchange.request.body, dict) and seen.case.api not in APIS_WITHOUT_SCHEMAS:
            musts = [finding for finding in validate(seen.case.api, "request", seen.exchange.request.body)
                     if finding.level is Level.MUST]
            assert not musts, (seen.case.id, musts)


# --- real samples: the real servers' captured answers -------------------------------------------------------------

CAPTURED = sorted(path.name for path in CAPTURES.iterdir() if path.is_dir()) if CAPTURES.is_dir() else []


def test_every_real_target_has_captures_with_provenance():
    # The embedded reference server's own answers are judged live by this module's reference_run; a bridge answers
    # over stdio, which no wire schema describes.
    assert CAPTURED == sorted(path.stem for path in TARGET_FILES.glob("*.toml")
                              if path.stem != "reference" and not load_target_file(path).bridge)
    for name in CAPTURED:
        assert {"server_version", "model", "captured", "command", "lmconform"} <= set(provenance(name))
        assert any(True for _ in captures(name))


@pytest.mark.parametrize("name", CAPTURED)
def test_the_captured_answers_give_exactly_the_schema_verdicts_the_target_file_expects(name):
    spec = load_target_file(TARGET_FILES / f"{name}.toml")
    target = Target(base_url="http://captured.invalid", model=spec.model)
    schema_checks = [check for check_id, check in sorted(REGISTRY.items()) if check_id.startswith("schema.")]
    verdicts, cases = [], set()
    for seen in replayed(name, target):
        cases.add(seen.case.id)
        verdicts += [verdict for check in schema_checks if check.applies(seen.case)
                     for verdict in [evaluate(check, seen)] if verdict is not None]
    entries = tuple(entry for entry in spec.expectations.entries
                    if any(entry.matches(case, check.id) for case in cases for check in schema_checks))
    found = differences(verdicts, Expectations(spec.expectations.source, spec.expectations.label, entries))
    assert not found, f"{name}: the captures disagree with {spec.path.name}\n{table(found)}"


def test_captured_answers_are_judged_as_real_answers():
    """The captures are bytes the servers sent: a stream is read as a stream and a turn as a turn."""
    kinds = {(sample.api, sample.kind) for name in CAPTURED
             for seen in replayed(name, Target("http://captured.invalid")) for sample in samples_of(seen)}
    assert {("chat", "event"), ("chat", "body"), ("responses", "event"), ("models", "body")} <= kinds


# --- mutations: every schema rejects a change of a real sample ----------------------------------------------------
# Each API's folder holds the changes its schemas must reject (`mutations.json`, in the manner of the JSON Schema Test
# Suite: groups of tests, each group one schema): a test starts from the first real sample of its API and kind that
# has what `from` names (or from its literal `data`), makes it into a payload the reference never sends where
# `prepare` says, then sets or deletes one member; the schema finds the change at `level`, the strictest new finding.
# The format: tests/mutations.schema.json.
MUTATION_FORMAT = json.loads((Path(__file__).parent / "mutations.schema.json").read_text())


@dataclass(frozen=True)
class Mutation:
    api: str
    schema: str  # the schema file whose rule the mutation breaks
    via: str | None  # the schema to validate with, when `schema` is reached through another
    test: dict[str, Any]  # one test of the API's mutations.json

    @property
    def level(self) -> Level:
        return Level(self.test["level"])


def mutations_of(api: Api) -> list[Mutation]:
    """The mutations an API's folder declares (none when it has no `mutations.json`)."""
    path = api.folder / "mutations.json"
    if not path.is_file():
        return []
    groups = json.loads(path.read_text())
    Draft202012Validator(MUTATION_FORMAT).validate(groups)
    return [Mutation(api.name, group["schema"], group.get("via"), test) for group in groups for test in group["tests"]]


def graded_change(mutation: Mutation, start: Any) -> tuple[set[tuple[str, str, Level]], set[tuple[str, str, Level]]]:
    """The schema's grades of the starting payload once prepared, and the new ones the mutation brings."""
    for change in mutation.test.get("prepare", ()):
        _change(start, change)
    schema = mutation.via or mutation.schema
    before = _grades(schema, start)
    _change(start, mutation.test)
    return before, _grades(schema, start) - before


MUTATIONS = [mutation for api in APIS.values() for mutation in mutations_of(api)]


def _at(payload: Any, path: list) -> Any:
    """The member at `path`; None when there is none."""
    node = payload
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _change(payload: Any, change: dict[str, Any]) -> None:
    """One change of a test: `set` a member to `to`, or `delete` it (a member already absent stays so)."""
    path = change["set"] if "set" in change else change["delete"]
    node = _at(payload, path[:-1])
    if "set" in change:
        node[path[-1]] = copy.deepcopy(change["to"])
    elif isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        del node[path[-1]]


def _picked(test: dict[str, Any], payload: Any) -> bool:
    return all(_at(payload, where["at"]) == where["is"] if "is" in where else _at(payload, where["at"]) is not None
               for where in test.get("from", ()))


def test_every_schema_has_a_mutation():
    assert set(schema_paths()) - {mutation.schema for mutation in MUTATIONS} == set()


def _grades(schema: str, payload: Any) -> set[tuple[str, str, Level]]:
    """Under the reference server's own profile, where its answers have no finding."""
    found = schema_set("reference").findings(schema, payload)
    return {(finding.pointer, finding.keyword, finding.level) for finding in found}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda mutation: f"{mutation.schema}:{mutation.test['description']}")
def test_each_schema_rejects_a_mutation_of_a_real_sample_at_its_level(mutation, reference_samples):
    test = mutation.test
    if "data" in test:
        start = copy.deepcopy(test["data"])
    else:
        start = copy.deepcopy(next(sample.payload for sample in reference_samples
                                   if (sample.api, sample.kind) == (mutation.api, test["kind"])
                                   and _picked(test, sample.payload)))
    before, found = graded_change(mutation, start)
    assert not {grade for grade in before if grade[2] is not Level.INFO}, f"the starting sample is not valid: {before}"
    assert found, "the mutation went unnoticed"
    assert min((level for _, _, level in found), key=LENIENCY.index) is mutation.level, found
