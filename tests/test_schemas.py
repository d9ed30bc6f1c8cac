"""The wire schemas themselves: valid Draft 2020-12 under every profile, every reference resolved, every level one
of ours; every answer of the reference server valid under every profile; the real servers' captured answers giving
exactly the schema verdicts their expected-verdict files list; and every schema rejecting a mutation of a real
sample, at the level it grades what the mutation broke."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

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

Mutate = Callable[[Any], None]


def _set(path: list, value: Any) -> Mutate:
    def mutate(payload: Any) -> None:
        node = payload
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return mutate


def _delete(path: list) -> Mutate:
    def mutate(payload: Any) -> None:
        node = payload
        for step in path[:-1]:
            node = node[step]
        del node[path[-1]]
    return mutate


@dataclass(frozen=True)
class Mutation:
    schema: str  # the schema file whose rule the mutation breaks
    what: str
    api: str
    kind: str
    pick: Callable[[Any], bool]  # which real sample of (api, kind) to start from
    mutate: Mutate
    level: Level  # the strictest new finding it must get
    via: str | None = None  # the schema to validate with, when `schema` is reached through another
    prepare: Callable[[Any], Any] | None = None  # the real sample made into one of a kind the reference never sends


def _type(name: str) -> Callable[[Any], bool]:
    return lambda payload: payload.get("type") == name


def _has(*path) -> Callable[[Any], bool]:
    def has(payload: Any) -> bool:
        node = payload
        for step in path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                return False
        return node is not None
    return has


def _any(payload: Any) -> bool:
    return True


def _event(new_type: str, **changes: Any) -> Callable[[Any], Any]:
    """A real event made into another type: members set, or left out where the change is None."""
    def prepare(event: dict) -> dict:
        made = {**event, "type": new_type, **copy.deepcopy(changes)}
        return {key: value for key, value in made.items() if value is not None}
    return prepare


def _lifecycle(new_type: str, **response: Any) -> Callable[[Any], Any]:
    return lambda event: {**event, "type": new_type, "response": {**event["response"], **response}}


def _error_event(nested: bool) -> Callable[[Any], Any]:
    def prepare(body: dict) -> dict:
        if nested:
            return {"type": "error", "sequence_number": 0, "error": body["error"]}
        return {"type": "error", "sequence_number": 0, **{k: v for k, v in body["error"].items() if k != "type"}}
    return prepare


def _delta(kind: str) -> Callable[[Any], bool]:
    return lambda event: event.get("type") == "content_block_delta" and event["delta"].get("type") == kind


def _first_output(kind: str) -> Callable[[Any], bool]:
    return lambda result: bool(result.get("output")) and result["output"][0].get("type") == kind


def _function_call_output(body: dict) -> dict:
    return next(item for item in body["input"] if isinstance(item, dict) and item.get("type") == "function_call_output")


R = "responses/events/"
M = "messages/events/"
N = "native_chat/events/"
TOOL_RESULT = _has("messages", 2, "tool_call_id")
def _reasoning_item_done(event: dict) -> bool:
    return event["type"] == "response.output_item.done" and event["item"]["type"] == "reasoning"

SUMMARY_PART = {"summary_index": 0, "content_index": None, "text": None, "part": {"type": "summary_text", "text": ""}}
MUTATIONS = [
    # chat completions
    Mutation("chat/request.json", "messages is a string", "chat", "request", _any, _set(["messages"], "bad"),
             Level.MUST),
    Mutation("chat/request.json", "temperature 3", "chat", "request", _any, _set(["temperature"], 3), Level.SHOULD),
    Mutation("chat/message.json", "a tool message without tool_call_id", "chat", "request", TOOL_RESULT,
             _delete(["messages", 2, "tool_call_id"]), Level.MUST, via="chat/request.json"),
    Mutation("chat/tool.json", "a function name with a space", "chat", "request", _has("tools", 0),
             _set(["tools", 0, "function", "name"], "get weather"), Level.SHOULD, via="chat/request.json"),
    Mutation("chat/tool-call.json", "an assistant's tool call without id", "chat", "request", TOOL_RESULT,
             _delete(["messages", 1, "tool_calls", 0, "id"]), Level.MUST, via="chat/request.json"),
    Mutation("chat/completion.json", "object says chat.completion.chunk", "chat", "body", _any,
             _set(["object"], "chat.completion.chunk"), Level.MUST),
    Mutation("chat/completion.json", "finish_reason null", "chat", "body", _any,
             _set(["choices", 0, "finish_reason"], None), Level.SHOULD),
    Mutation("chat/completion.json", "the message without refusal", "chat", "body", _any,
             _delete(["choices", 0, "message", "refusal"]), Level.INFO),
    Mutation("chat/tool-call.json", "arguments as an object", "chat", "body",
             _has("choices", 0, "message", "tool_calls", 0),
             _set(["choices", 0, "message", "tool_calls", 0, "function", "arguments"], {"a": 1}), Level.MUST,
             via="chat/completion.json"),
    Mutation("chat/chunk.json", "choices missing", "chat", "event", _any, _delete(["choices"]), Level.MUST),
    Mutation("chat/chunk.json", "created as a string", "chat", "event", _any, _set(["created"], "1732000000"),
             Level.SHOULD),
    Mutation("chat/chunk.json", "an empty choices list without usage", "chat", "event", _has("choices", 0),
             _set(["choices"], []), Level.MUST),
    Mutation("chat/chunk.json", "finish_reason left out", "chat", "event", _has("choices", 0),
             _delete(["choices", 0, "finish_reason"]), Level.INFO),
    Mutation("chat/stream-payload.json", "an in-stream error without a message", "chat", "event", _any,
             _set(["error"], {"type": "server_error"}), Level.MUST),
    Mutation("chat/tool-call-delta.json", "index missing", "chat", "event", _has("choices", 0, "delta", "tool_calls"),
             _delete(["choices", 0, "delta", "tool_calls", 0, "index"]), Level.MUST, via="chat/stream-payload.json"),
    Mutation("chat/tool-call-delta.json", "type null", "chat", "event", _has("choices", 0, "delta", "tool_calls"),
             _set(["choices", 0, "delta", "tool_calls", 0, "type"], None), Level.MUST, via="chat/stream-payload.json"),
    Mutation("chat/tool-call-delta.json", "id null", "chat", "event", _has("choices", 0, "delta", "tool_calls"),
             _set(["choices", 0, "delta", "tool_calls", 0, "id"], None), Level.INFO, via="chat/stream-payload.json"),
    Mutation("common/usage.json", "total_tokens missing", "chat", "body", _any, _delete(["usage", "total_tokens"]),
             Level.SHOULD, via="chat/completion.json"),
    Mutation("chat/error.json", "an empty bare message", "chat", "error", _any, _set(["error"], ""), Level.MUST),
    # text completions
    Mutation("completions/request.json", "prompt is a number", "completions", "request", _any, _set(["prompt"], 42),
             Level.MUST),
    Mutation("completions/request.json", "logprobs above 5", "completions", "request", _any, _set(["logprobs"], 9),
             Level.SHOULD),
    Mutation("completions/completion.json", "choices missing", "completions", "body", _any, _delete(["choices"]),
             Level.MUST),
    Mutation("completions/completion.json", "created as a string", "completions", "body", _any,
             _set(["created"], "1732000000"), Level.SHOULD),
    Mutation("completions/completion.json", "system_fingerprint as a number", "completions", "body", _any,
             _set(["system_fingerprint"], 7), Level.INFO),
    Mutation("completions/choice.json", "text as a number", "completions", "body", _any,
             _set(["choices", 0, "text"], 7), Level.MUST, via="completions/completion.json"),
    Mutation("completions/choice.json", "an unknown finish_reason", "completions", "body", _any,
             _set(["choices", 0, "finish_reason"], "done"), Level.SHOULD, via="completions/completion.json"),
    Mutation("completions/choice.json", "logprobs without text_offset", "completions", "body",
             _has("choices", 0, "logprobs"), _delete(["choices", 0, "logprobs", "text_offset"]), Level.SHOULD,
             via="completions/completion.json"),
    Mutation("completions/chunk.json", "choices missing", "completions", "event", _any, _delete(["choices"]),
             Level.MUST),
    Mutation("completions/chunk.json", "id missing", "completions", "event", _any, _delete(["id"]), Level.SHOULD),
    Mutation("completions/chunk.json", "a choice without finish_reason", "completions", "event", _has("choices", 0),
             _delete(["choices", 0, "finish_reason"]), Level.INFO),
    Mutation("completions/stream-payload.json", "an in-stream error without a message", "completions", "event", _any,
             _set(["error"], {"type": "server_error"}), Level.MUST),
    # errors and models
    Mutation("common/error.json", "an error object without message", "responses", "error", _any,
             _delete(["error", "message"]), Level.MUST, via="responses/error.json"),
    Mutation("common/error.json", "type missing", "responses", "error", _any, _delete(["error", "type"]),
             Level.SHOULD, via="responses/error.json"),
    Mutation("common/error.json", "code missing", "responses", "error", _any, _delete(["error", "code"]),
             Level.INFO, via="responses/error.json"),
    Mutation("responses/error.json", "message missing", "responses", "error", _any, _delete(["error", "message"]),
             Level.MUST),
    Mutation("models/list.json", "a model without id", "models", "body", _any, _delete(["data", 0, "id"]),
             Level.MUST),
    Mutation("models/list.json", "a model without owned_by", "models", "body", _any,
             _delete(["data", 0, "owned_by"]), Level.SHOULD),
    # Responses requests and their items
    Mutation("responses/request.json", "input is a number", "responses", "request", _any, _set(["input"], 42),
             Level.MUST),
    Mutation("responses/tool.json", "a chat-form (nested) function tool", "responses", "request",
             _has("tools", 0, "name"),
             lambda body: body["tools"].__setitem__(0, {"type": "function", "function": {"name": "calculate"}}),
             Level.MUST, via="responses/request.json"),
    Mutation("responses/tool-choice.json", "a forced function in the chat form", "responses", "request",
             _has("tools", 0, "name"),
             _set(["tool_choice"], {"type": "function", "function": {"name": "calculate"}}), Level.MUST,
             via="responses/request.json"),
    Mutation("responses/input-item.json", "a message with a numeric role", "responses", "request",
             _has("input", 0, "role"), _set(["input", 0, "role"], 1), Level.MUST, via="responses/request.json"),
    Mutation("responses/items/input-message.json", "content is an object", "responses", "request",
             _has("input", 0, "role"), _set(["input", 0, "content"], {"text": "hi"}), Level.MUST,
             via="responses/request.json"),
    Mutation("responses/items/function-call-output.json", "output is a number", "responses", "request",
             lambda body: any(isinstance(item, dict) and item.get("type") == "function_call_output"
                              for item in body.get("input") or [] if isinstance(body.get("input"), list)),
             lambda body: _function_call_output(body).__setitem__("output", 3), Level.MUST,
             via="responses/request.json"),
    # Responses objects and their items
    Mutation("responses/response.json", "output missing", "responses", "body", _any, _delete(["output"]),
             Level.MUST),
    Mutation("responses/response.json", "created_at as a string", "responses", "body", _any,
             _set(["created_at"], "now"), Level.SHOULD),
    Mutation("responses/response.json", "top_p left out", "responses", "body", _any, _delete(["top_p"]),
             Level.INFO),
    Mutation("responses/usage.json", "output_tokens as a string", "responses", "body", _any,
             _set(["usage", "output_tokens"], "12"), Level.SHOULD, via="responses/response.json"),
    Mutation("responses/output-item.json", "an unprefixed unknown item type", "responses", "body",
             _has("output", 0, "content"), _set(["output", 0, "type"], "telemetry"), Level.INFO,
             via="responses/response.json"),
    Mutation("responses/items/output-message.json", "content is a string", "responses", "body",
             _has("output", 0, "content"), _set(["output", 0, "content"], "Hello"), Level.MUST,
             via="responses/response.json"),
    Mutation("responses/content-part.json", "output_text without annotations", "responses", "body",
             _has("output", 0, "content", 0), _delete(["output", 0, "content", 0, "annotations"]), Level.SHOULD,
             via="responses/response.json"),
    Mutation("responses/items/function-call.json", "call_id missing", "responses", "body",
             _has("output", 0, "call_id"), _delete(["output", 0, "call_id"]), Level.MUST,
             via="responses/response.json"),
    Mutation("responses/items/reasoning.json", "summary missing", "responses", "event", _reasoning_item_done,
             _delete(["item", "summary"]), Level.SHOULD, via=R + "output-item-done.json"),
    # Responses events
    Mutation(R + "event.json", "type missing", "responses", "event", _type("response.output_text.delta"),
             _delete(["type"]), Level.MUST),
    Mutation(R + "event.json", "an unprefixed unknown event type", "responses", "event",
             _type("response.in_progress"), _set(["type"], "response.thinking"), Level.INFO),
    Mutation(R + "common.json", "a truthy top-level error on a delta", "responses", "event",
             _type("response.output_text.delta"), _set(["error"], {"message": "x"}), Level.MUST, via=R + "event.json"),
    Mutation(R + "response-created.json", "response missing", "responses", "event", _type("response.created"),
             _delete(["response"]), Level.MUST),
    Mutation(R + "response-created.json", "sequence_number missing", "responses", "event",
             _type("response.created"), _delete(["sequence_number"]), Level.SHOULD),
    Mutation(R + "response-in-progress.json", "a snapshot that says completed", "responses", "event",
             _type("response.in_progress"), _set(["response", "status"], "completed"), Level.SHOULD),
    Mutation(R + "response-completed.json", "response output missing", "responses", "event",
             _type("response.completed"), _delete(["response", "output"]), Level.MUST),
    Mutation(R + "response-queued.json", "response id missing", "responses", "event", _type("response.created"),
             _delete(["response", "id"]), Level.MUST, prepare=_lifecycle("response.queued", status="queued")),
    Mutation(R + "response-failed.json", "a failed response without error", "responses", "event",
             _type("response.completed"), _set(["response", "error"], None), Level.SHOULD,
             prepare=_lifecycle("response.failed", status="failed",
                                error={"code": "server_error", "message": "The model crashed."})),
    Mutation(R + "response-incomplete.json", "an incomplete response without incomplete_details", "responses",
             "event", _type("response.completed"), _delete(["response", "incomplete_details"]), Level.SHOULD,
             prepare=_lifecycle("response.incomplete", status="incomplete",
                                incomplete_details={"reason": "max_output_tokens"})),
    Mutation(R + "output-item-added.json", "item missing", "responses", "event", _type("response.output_item.added"),
             _delete(["item"]), Level.MUST),
    Mutation(R + "output-item-done.json", "output_index negative", "responses", "event",
             _type("response.output_item.done"), _set(["output_index"], -1), Level.SHOULD),
    Mutation(R + "content-part-added.json", "output_index missing", "responses", "event",
             _type("response.content_part.added"), _delete(["output_index"]), Level.MUST),
    Mutation(R + "content-part-done.json", "part is a string", "responses", "event",
             _type("response.content_part.done"), _set(["part"], "Hello"), Level.MUST),
    Mutation(R + "output-text-delta.json", "item_id missing", "responses", "event",
             _type("response.output_text.delta"), _delete(["item_id"]), Level.MUST),
    Mutation(R + "output-text-delta.json", "logprobs missing", "responses", "event",
             _type("response.output_text.delta"), _delete(["logprobs"]), Level.INFO),
    Mutation(R + "output-text-done.json", "text missing", "responses", "event", _type("response.output_text.done"),
             _delete(["text"]), Level.MUST),
    Mutation(R + "refusal-delta.json", "delta is a number", "responses", "event",
             _type("response.output_text.delta"), _set(["delta"], 1), Level.MUST,
             prepare=_event("response.refusal.delta", logprobs=None)),
    Mutation(R + "refusal-done.json", "refusal missing", "responses", "event", _type("response.output_text.done"),
             _delete(["refusal"]), Level.MUST,
             prepare=_event("response.refusal.done", refusal="I can't.", text=None, logprobs=None)),
    Mutation(R + "function-call-arguments-delta.json", "output_index missing", "responses", "event",
             _type("response.function_call_arguments.delta"), _delete(["output_index"]), Level.MUST),
    Mutation(R + "function-call-arguments-done.json", "arguments as an object", "responses", "event",
             _type("response.function_call_arguments.done"), _set(["arguments"], {}), Level.MUST),
    Mutation(R + "function-call-arguments-done.json", "name missing (Open Responses omits it)", "responses", "event",
             _type("response.function_call_arguments.done"), _delete(["name"]), Level.INFO),
    Mutation(R + "reasoning-text-delta.json", "delta missing", "responses", "event",
             _type("response.reasoning_text.delta"), _delete(["delta"]), Level.MUST),
    Mutation(R + "reasoning-text-delta.json", "Open Responses' name response.reasoning.delta", "responses", "event",
             _type("response.reasoning_text.delta"), _set(["type"], "response.reasoning.delta"), Level.INFO,
             via=R + "event.json"),
    Mutation(R + "reasoning-text-done.json", "content_index missing", "responses", "event",
             _type("response.reasoning_text.done"), _delete(["content_index"]), Level.SHOULD),
    Mutation(R + "reasoning-summary-part-added.json", "a part of type output_text", "responses", "event",
             _type("response.reasoning_text.done"), _set(["part", "type"], "output_text"), Level.SHOULD,
             prepare=_event("response.reasoning_summary_part.added", **SUMMARY_PART)),
    Mutation(R + "reasoning-summary-part-done.json", "part missing", "responses", "event",
             _type("response.reasoning_text.done"), _delete(["part"]), Level.MUST,
             prepare=_event("response.reasoning_summary_part.done", **SUMMARY_PART)),
    Mutation(R + "reasoning-summary-text-delta.json", "summary_index missing", "responses", "event",
             _type("response.reasoning_text.delta"), _delete(["summary_index"]), Level.SHOULD,
             prepare=_event("response.reasoning_summary_text.delta", summary_index=0, content_index=None)),
    Mutation(R + "reasoning-summary-text-done.json", "text is null", "responses", "event",
             _type("response.reasoning_text.done"), _set(["text"], None), Level.MUST,
             prepare=_event("response.reasoning_summary_text.done", summary_index=0, content_index=None)),
    Mutation(R + "error.json", "OpenAI's flat error event without message", "responses", "error", _any,
             _delete(["message"]), Level.MUST, via=R + "error.json", prepare=_error_event(nested=False)),
    Mutation(R + "error.json", "Open Responses' nested error event without sequence_number", "responses", "error",
             _any, _delete(["sequence_number"]), Level.SHOULD, via=R + "error.json", prepare=_error_event(nested=True)),
    # Anthropic Messages: requests
    Mutation("messages/request.json", "max_tokens as a string", "messages", "request", _has("messages", 0),
             _set(["max_tokens"], "64"), Level.MUST),
    Mutation("messages/request.json", "a tool role", "messages", "request", _has("messages", 0),
             _set(["messages", 0, "role"], "tool"), Level.MUST),
    Mutation("messages/request.json", "temperature 2", "messages", "request", _has("messages", 0),
             _set(["temperature"], 2), Level.SHOULD),
    Mutation("messages/request.json", "a forced tool without its name", "messages", "request", _has("tools", 0),
             _set(["tool_choice"], {"type": "tool"}), Level.MUST),
    Mutation("messages/input-block.json", "a tool_result without tool_use_id", "messages", "request",
             _has("messages", 2, "content", 0, "tool_use_id"), _delete(["messages", 2, "content", 0, "tool_use_id"]),
             Level.MUST, via="messages/request.json"),
    Mutation("messages/input-block.json", "a tool_use sent back with its input as JSON text", "messages", "request",
             _has("messages", 1, "content", 0, "input"), _set(["messages", 1, "content", 0, "input"], "{}"),
             Level.MUST, via="messages/request.json"),
    # Anthropic Messages: the message and its error
    Mutation("messages/message.json", "content as a string", "messages", "body", _any, _set(["content"], "Hello"),
             Level.MUST),
    Mutation("messages/message.json", "OpenAI's stop reason", "messages", "body", _any, _set(["stop_reason"], "stop"),
             Level.MUST),
    Mutation("messages/message.json", "stop_reason null", "messages", "body", _any, _set(["stop_reason"], None),
             Level.SHOULD),
    Mutation("messages/message.json", "type missing", "messages", "body", _any, _delete(["type"]), Level.SHOULD),
    Mutation("messages/message.json", "stop_sequence left out", "messages", "body", _any, _delete(["stop_sequence"]),
             Level.INFO),
    Mutation("messages/content-block.json", "a tool_use block without id", "messages", "body",
             _has("content", 0, "id"), _delete(["content", 0, "id"]), Level.MUST, via="messages/message.json"),
    Mutation("messages/content-block.json", "a text block's text null", "messages", "body", _has("content", 0, "text"),
             _set(["content", 0, "text"], None), Level.MUST, via="messages/message.json"),
    Mutation("messages/content-block.json", "an unknown block type", "messages", "body", _has("content", 0, "text"),
             _set(["content", 0, "type"], "telemetry"), Level.INFO, via="messages/message.json"),
    Mutation("messages/usage.json", "output_tokens as a string", "messages", "body", _any,
             _set(["usage", "output_tokens"], "7"), Level.MUST, via="messages/message.json"),
    Mutation("messages/usage.json", "cache_read_input_tokens as a string", "messages", "body", _any,
             _set(["usage", "cache_read_input_tokens"], "0"), Level.SHOULD, via="messages/message.json"),
    Mutation("messages/error.json", "an error without message", "messages", "error", _any,
             _delete(["error", "message"]), Level.MUST),
    Mutation("messages/error.json", "OpenAI's shape: no top-level type", "messages", "error", _any,
             _delete(["type"]), Level.SHOULD),
    Mutation("messages/error.json", "an unknown error type", "messages", "error", _any,
             _set(["error", "type"], "teapot_error"), Level.INFO),
    # Anthropic Messages: stream events
    Mutation(M + "event.json", "type missing", "messages", "event", _type("ping"), _delete(["type"]), Level.MUST),
    Mutation(M + "event.json", "an unknown event type", "messages", "event", _type("ping"), _set(["type"], "keepalive"),
             Level.INFO),
    Mutation(M + "message-start.json", "a message that already has content", "messages", "event",
             _type("message_start"), _set(["message", "content"], [{"type": "text", "text": "Hi"}]), Level.MUST),
    Mutation(M + "message-start.json", "usage missing", "messages", "event", _type("message_start"),
             _delete(["message", "usage"]), Level.MUST),
    Mutation(M + "message-start.json", "stop_reason left out", "messages", "event", _type("message_start"),
             _delete(["message", "stop_reason"]), Level.INFO),
    Mutation(M + "content-block-start.json", "index missing", "messages", "event", _type("content_block_start"),
             _delete(["index"]), Level.MUST),
    Mutation(M + "content-block-start.json", "a tool_use block opened without input", "messages", "event",
             _has("content_block", "input"), _delete(["content_block", "input"]), Level.SHOULD),
    Mutation(M + "content-block-delta.json", "partial_json as an object", "messages", "event",
             _delta("input_json_delta"), _set(["delta", "partial_json"], {}), Level.MUST),
    Mutation(M + "content-block-delta.json", "a text delta without text", "messages", "event", _delta("text_delta"),
             _delete(["delta", "text"]), Level.MUST),
    Mutation(M + "content-block-delta.json", "an unknown delta type", "messages", "event", _delta("text_delta"),
             _set(["delta", "type"], "text_chunk"), Level.INFO),
    Mutation(M + "content-block-stop.json", "index -1", "messages", "event", _type("content_block_stop"),
             _set(["index"], -1), Level.MUST),
    Mutation(M + "message-delta.json", "usage missing", "messages", "event", _type("message_delta"),
             _delete(["usage"]), Level.MUST),
    Mutation(M + "message-delta.json", "stop_reason null", "messages", "event", _type("message_delta"),
             _set(["delta", "stop_reason"], None), Level.SHOULD),
    Mutation(M + "message-delta.json", "stop_sequence left out", "messages", "event", _type("message_delta"),
             _delete(["delta", "stop_sequence"]), Level.INFO),
    Mutation(M + "message-stop.json", "type says message_end", "messages", "event", _type("message_stop"),
             _set(["type"], "message_end"), Level.MUST),
    Mutation(M + "ping.json", "type says pong", "messages", "event", _type("ping"), _set(["type"], "pong"), Level.MUST),
    # LM Studio's native chat: requests, results and errors
    Mutation("native_chat/request.json", "input is a number", "native_chat", "request", _has("input"),
             _set(["input"], 42), Level.MUST),
    Mutation("native_chat/request.json", "an input item without content", "native_chat", "request",
             _has("input", 0, "content"), _delete(["input", 0, "content"]), Level.MUST),
    Mutation("native_chat/request.json", "a plugin without id", "native_chat", "request", _has("integrations", 0, "id"),
             _delete(["integrations", 0, "id"]), Level.MUST),
    Mutation("native_chat/request.json", "temperature 2", "native_chat", "request", _has("input"),
             _set(["temperature"], 2), Level.SHOULD),
    Mutation("native_chat/result.json", "stats missing", "native_chat", "body", _any, _delete(["stats"]), Level.MUST),
    Mutation("native_chat/result.json", "input_tokens as a string", "native_chat", "body", _any,
             _set(["stats", "input_tokens"], "5"), Level.MUST),
    Mutation("native_chat/result.json", "model_instance_id missing", "native_chat", "body", _any,
             _delete(["model_instance_id"]), Level.SHOULD),
    Mutation("native_chat/result.json", "tokens_per_second missing", "native_chat", "body", _any,
             _delete(["stats", "tokens_per_second"]), Level.SHOULD),
    Mutation("native_chat/output-item.json", "a message item without content", "native_chat", "body",
             _first_output("message"), _delete(["output", 0, "content"]), Level.MUST, via="native_chat/result.json"),
    Mutation("native_chat/output-item.json", "a tool call's arguments as JSON text", "native_chat", "body",
             _first_output("tool_call"), _set(["output", 0, "arguments"], "{}"), Level.MUST,
             via="native_chat/result.json"),
    Mutation("native_chat/output-item.json", "a tool call without provider_info", "native_chat", "body",
             _first_output("tool_call"), _delete(["output", 0, "provider_info"]), Level.SHOULD,
             via="native_chat/result.json"),
    Mutation("native_chat/output-item.json", "an unknown item type", "native_chat", "body", _first_output("message"),
             _set(["output", 0, "type"], "text"), Level.SHOULD, via="native_chat/result.json"),
    Mutation("native_chat/error.json", "an error without message", "native_chat", "error", _any,
             _delete(["error", "message"]), Level.MUST),
    Mutation("native_chat/error.json", "an unknown error type", "native_chat", "error", _any,
             _set(["error", "type"], "invalid_request_error"), Level.SHOULD),
    # LM Studio's native chat: stream events
    Mutation(N + "event.json", "type missing", "native_chat", "event", _type("message.start"), _delete(["type"]),
             Level.MUST),
    Mutation(N + "event.json", "an unknown event type", "native_chat", "event", _type("message.start"),
             _set(["type"], "message.begin"), Level.SHOULD),
    Mutation(N + "chat-start.json", "model_instance_id missing", "native_chat", "event", _type("chat.start"),
             _delete(["model_instance_id"]), Level.SHOULD),
    Mutation(N + "model-load.json", "model_load.end without load_time_seconds", "native_chat", "event",
             _type("chat.start"), _delete(["load_time_seconds"]), Level.SHOULD,
             prepare=_event("model_load.end", load_time_seconds=2.5)),
    Mutation(N + "progress.json", "progress in percent", "native_chat", "event", _type("prompt_processing.progress"),
             _set(["progress"], 50), Level.SHOULD),
    Mutation(N + "boundary.json", "a phase start with another name", "native_chat", "event", _type("message.start"),
             _set(["type"], "message.begin"), Level.MUST),
    Mutation(N + "delta.json", "content missing", "native_chat", "event", _type("message.delta"),
             _delete(["content"]), Level.MUST),
    Mutation(N + "tool-call-start.json", "tool missing", "native_chat", "event", _type("tool_call.start"),
             _delete(["tool"]), Level.MUST),
    Mutation(N + "tool-call-start.json", "provider_info missing", "native_chat", "event", _type("tool_call.start"),
             _delete(["provider_info"]), Level.SHOULD),
    Mutation(N + "tool-call-arguments.json", "arguments as JSON text", "native_chat", "event",
             _type("tool_call.arguments"), _set(["arguments"], "{}"), Level.MUST),
    Mutation(N + "tool-call-success.json", "output missing", "native_chat", "event", _type("tool_call.success"),
             _delete(["output"]), Level.MUST),
    Mutation(N + "tool-call-failure.json", "metadata missing", "native_chat", "event", _type("tool_call.start"),
             _delete(["metadata"]), Level.SHOULD,
             prepare=_event("tool_call.failure", tool=None, provider_info=None, reason="no tool get_tme",
                            metadata={"type": "invalid_name", "tool_name": "get_tme"})),
    Mutation(N + "chat-end.json", "result missing", "native_chat", "event", _type("chat.end"), _delete(["result"]),
             Level.MUST),
]


def test_every_schema_has_a_mutation():
    assert set(schema_paths()) - {mutation.schema for mutation in MUTATIONS} == set()


def _grades(schema: str, payload: Any) -> set[tuple[str, str, Level]]:
    """Under the reference server's own profile, where its answers have no finding."""
    found = schema_set("reference").findings(schema, payload)
    return {(finding.pointer, finding.keyword, finding.level) for finding in found}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda mutation: f"{mutation.schema}:{mutation.what}")
def test_each_schema_rejects_a_mutation_of_a_real_sample_at_its_level(mutation, reference_samples):
    real = next(sample.payload for sample in reference_samples
                if (sample.api, sample.kind) == (mutation.api, mutation.kind) and mutation.pick(sample.payload))
    start = mutation.prepare(copy.deepcopy(real)) if mutation.prepare else copy.deepcopy(real)
    schema = mutation.via or mutation.schema
    before = _grades(schema, start)
    assert not {grade for grade in before if grade[2] is not Level.INFO}, f"the starting sample is not valid: {before}"
    mutation.mutate(start)
    found = _grades(schema, start) - before
    assert found, "the mutation went unnoticed"
    assert min((level for _, _, level in found), key=LENIENCY.index) is mutation.level, found
    assert not schema_set("reference").ungraded
