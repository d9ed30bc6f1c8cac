"""The Responses tool types beside `function` that Codex sends: what the reference server does with each (a
namespace's call back as a `function_call` naming its namespace, a custom tool's as a `custom_tool_call`, hosted tools
accepted and echoed), what each fault of them changes, and the tool-type matrix's grades in the results row (the matrix
pages read them: tests/test_structured_outputs.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
from fault_effects import FaultEffects

from lmconform.cases import load_cases
from lmconform.checks.evaluate import evaluate
from lmconform.checks.observed import Observed
from lmconform.checks.registry import REGISTRY
from lmconform.run import run_suite
from lmconform.run.play import play
from lmconform.schemas.grammar import in_grammar
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Outcome
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

GRADED = "responses.tools.type_graded"
LOOKUP = {"type": "function", "name": "lookup_weather", "description": "The weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
FORECAST = {"type": "namespace", "name": "forecast", "description": "An MCP server's tools", "tools": [LOOKUP]}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Apply a patch"}
GRAMMAR = {**PATCH, "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "patch"'}}
HOSTED = [{"type": "web_search"}, {"type": "tool_search"}, {"type": "local_shell"}, {"type": "image_generation"},
          {"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example.com/sse"}]
NAMESPACED = {"input": "Use the lookup_weather tool to get the weather in Paris.", "tools": [FORECAST]}
PATCHING = {"input": "Use the apply_patch tool to add a file that says Hello.", "tools": [PATCH]}


def post(client: httpx.Client, body: dict[str, Any], fault: str | None = None) -> httpx.Response:
    return client.post(f"/faults/{fault}/v1/responses" if fault else "/v1/responses", json=body)


def output(client: httpx.Client, body: dict[str, Any], fault: str | None = None) -> list[dict[str, Any]]:
    response = post(client, body, fault)
    assert response.status_code == 200, response.text
    return response.json()["output"]


def events(client: httpx.Client, body: dict[str, Any], fault: str | None = None) -> list[dict[str, Any]]:
    prefix = f"/faults/{fault}" if fault else ""
    response = client.post(f"{prefix}/v1/responses", json={**body, "stream": True})
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]


def test_a_namespace_s_function_is_called_back_naming_its_namespace(client):
    (call,) = output(client, NAMESPACED)
    assert (call["type"], call["namespace"], call["name"]) == ("function_call", "forecast", "lookup_weather")
    assert json.loads(call["arguments"]) == {"city": "Paris"}


def test_a_custom_tool_is_called_with_free_text_and_its_input_streams(client):
    for tool in (PATCH, GRAMMAR):
        (call,) = output(client, {**PATCHING, "tools": [tool]})
        assert call["type"] == "custom_tool_call" and call["name"] == "apply_patch" and isinstance(call["input"], str)
        assert "arguments" not in call and call["id"].startswith("ctc_")
    streamed = events(client, PATCHING)
    added = next(event for event in streamed if event["type"] == "response.output_item.added")
    assert added["item"]["input"] == "" and added["item"]["status"] == "in_progress"
    deltas = "".join(event["delta"] for event in streamed if event["type"] == "response.custom_tool_call_input.delta")
    (done,) = [event for event in streamed if event["type"] == "response.custom_tool_call_input.done"]
    assert deltas == done["input"] == streamed[-1]["response"]["output"][0]["input"]


def test_hosted_tools_are_accepted_and_echoed_and_an_unknown_type_is_refused_naming_the_place(client):
    response = post(client, {"input": "Say hello.", "tools": HOSTED})
    assert response.status_code == 200 and response.json()["tools"] == HOSTED
    refused = post(client, {"input": "Say hello.", "tools": [{"type": "telepathy"}]})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "tools.0.type"
    broken = post(client, {"input": "Say hello.", "tools": [{**PATCH, "format": {"type": "grammar", "syntax": "ebnf",
                                                                                   "definition": "x"}}]})
    assert broken.status_code == 400 and broken.json()["error"]["param"] == "tools.0.format.syntax"


def test_custom_and_namespaced_calls_replayed_with_their_outputs_are_answered_from_them(client):
    (call,) = output(client, PATCHING)
    replay = [{"role": "user", "content": PATCHING["input"]}, call,
              {"type": "custom_tool_call_output", "call_id": call["call_id"], "output": "patched"}]
    (answer,) = output(client, {"input": replay, "tools": [PATCH], "store": False})
    assert answer["content"][0]["text"] == "The apply_patch tool returned: patched"
    (call,) = output(client, NAMESPACED)
    replay = [{"role": "user", "content": NAMESPACED["input"]}, call,
              {"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}]
    (answer,) = output(client, {"input": replay, "tools": [FORECAST]})
    assert answer["content"][0]["text"] == "The forecast__lookup_weather tool returned: sunny"


# --- faults: each changes what it names -------------------------------------------------------------------

FAULT_EFFECTS = FaultEffects()
effect = FAULT_EFFECTS.of


@effect("tool-types-dropped")
def _(client: httpx.Client) -> None:
    body = post(client, {**NAMESPACED, "tools": [FORECAST, PATCH, *HOSTED, LOOKUP]}, "tool-types-dropped").json()
    assert body["tools"] == [{**LOOKUP, "strict": None}] and body["output"][0]["type"] == "function_call"
    assert output(client, PATCHING, "tool-types-dropped")[0]["type"] == "message"


@effect("custom-call-as-function-call")
def _(client: httpx.Client) -> None:
    (call,) = output(client, PATCHING, "custom-call-as-function-call")
    clean = output(client, PATCHING)[0]
    assert call["type"] == "function_call" and json.loads(call["arguments"]) == {"input": clean["input"]}
    assert {event["type"] for event in events(client, PATCHING, "custom-call-as-function-call")} \
        >= {"response.function_call_arguments.done"}
    assert output(client, NAMESPACED, "custom-call-as-function-call")[0]["namespace"] == "forecast"


@effect("namespace-flattened")
def _(client: httpx.Client) -> None:
    (call,) = output(client, NAMESPACED, "namespace-flattened")
    assert call["name"] == "forecast__lookup_weather" and "namespace" not in call
    assert output(client, PATCHING, "namespace-flattened")[0]["type"] == "custom_tool_call"


@effect("responses-function-tools-only")
def _(client: httpx.Client) -> None:
    for tool in (FORECAST, PATCH, HOSTED[0]):
        refused = post(client, {"input": "Say hello.", "tools": [LOOKUP, tool]}, "responses-function-tools-only")
        assert refused.status_code == 400
        assert refused.json()["error"] == {"message": "Invalid discriminator value. Expected 'function' | 'mcp'",
                                           "type": "invalid_request_error", "param": "tools.1.type",
                                           "code": "invalid_union_discriminator"}
    assert post(client, {"input": "Say hello.", "tools": [HOSTED[-1]]}, "responses-function-tools-only") \
        .status_code == 200


@pytest.mark.parametrize("fault", sorted(FAULT_EFFECTS))
def test_fault(client: httpx.Client, fault: str) -> None:
    FAULT_EFFECTS[fault](client)


# --- the check and its matrix ---------------------------------------------------------------------------

def grades(base_url: str) -> dict[str, dict]:
    run = run_suite(Target(base_url=base_url), apis=("responses",), include=[GRADED],
                    settings=RunSettings(fuzz_examples=0))
    rows = [verdict.record() for verdict in run.verdicts]
    return {row["tool_type"]["family"]: row for row in rows}


HOSTED_FAMILIES = {"web_search", "tool_search", "local_shell", "image_generation", "mcp"}
FAMILIES = {"namespace", "custom", "custom (grammar)", *HOSTED_FAMILIES}


def test_the_clean_server_honours_every_tool_type_and_its_faults_fail_each_they_break(server):
    clean = grades(server.base_url)
    assert set(clean) == FAMILIES and {(row["outcome"], row["tool_type"]["grade"]) for row in clean.values()} \
        == {("OK", "honoured")}
    assert "echoed" in clean["web_search"]["tool_type"]["evidence"]
    dropped = grades(f"{server.base_url}/faults/tool-types-dropped")
    assert {(row["outcome"], row["tool_type"]["grade"]) for row in dropped.values()} == {("FAILED", "dropped")}
    wrong = grades(f"{server.base_url}/faults/custom-call-as-function-call")
    assert {family for family, row in wrong.items() if row["outcome"] == "FAILED"} == {"custom", "custom (grammar)"}
    assert "wrong item type" in wrong["custom"]["tool_type"]["evidence"]
    flattened = grades(f"{server.base_url}/faults/namespace-flattened")
    assert {family for family, row in flattened.items() if row["outcome"] == "FAILED"} == {"namespace"}
    assert "'forecast__lookup_weather'" in flattened["namespace"]["message"]


CALLED_FAMILIES = {"namespace", "custom", "custom (grammar)"}


def test_a_called_tool_is_honoured_only_when_its_output_sent_back_is_read(server):
    clean = grades(server.base_url)
    assert all("its output taken on the next turn" in clean[family]["tool_type"]["evidence"]
               for family in CALLED_FAMILIES)
    forgotten = grades(f"{server.base_url}/faults/replay-forgotten")
    assert {family for family, row in forgotten.items() if row["outcome"] == "FAILED"} == CALLED_FAMILIES
    assert all(forgotten[family]["tool_type"]["grade"] == "dropped"
               and "accepted with a 200 and forgotten" in forgotten[family]["tool_type"]["evidence"]
               for family in CALLED_FAMILIES)
    # The output refused with a 4xx is a limit the server states: the call honoured, its result cannot come back.
    refused = grades(f"{server.base_url}/faults/function-call-output-rejected")
    assert {(family, row["outcome"], row["tool_type"]["grade"]) for family, row in refused.items()
            if family in CALLED_FAMILIES} == {(family, "OK", "refused") for family in CALLED_FAMILIES}
    assert "its output refused on the next turn: HTTP 400" in refused["custom"]["tool_type"]["evidence"]


def test_lm_studio_s_refusal_is_a_limit_that_names_the_tool_and_what_it_costs_codex(server):
    refused = grades(f"{server.base_url}/faults/responses-function-tools-only")
    assert {(row["outcome"], row["tool_type"]["grade"]) for family, row in refused.items() if family != "mcp"} \
        == {("OK", "refused")}
    assert refused["mcp"]["tool_type"]["grade"] == "honoured"
    evidence = refused["custom"]["tool_type"]["evidence"]
    assert "names the tool" in evidence and "apply_patch is a custom tool" in evidence


# --- a grammar tool's input against its grammar ---------------------------------------------------------------------

CONFORMS = "responses.tools.grammar_input_conforms"
PATCH_LARK = 'start: "*** Begin Patch\\n" LINE+ "*** End Patch"\nLINE: /[^\\n]*\\n/'
PATCH_REGEX = r"\*\*\* Begin Patch\n(.*\n)+\*\*\* End Patch"
A_PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** End Patch"


def test_a_text_is_told_in_or_out_of_its_grammar_or_said_to_be_unchecked():
    assert in_grammar("lark", PATCH_LARK, A_PATCH).matches is True
    assert in_grammar("regex", PATCH_REGEX, A_PATCH).matches is True
    out = in_grammar("lark", PATCH_LARK, "Hello")
    assert out.matches is False and "character 0" in out.why
    assert in_grammar("regex", PATCH_REGEX, A_PATCH + "\n").matches is False  # matched whole
    assert in_grammar("lark", "start: %json", "{}").matches is None  # LLGuidance's extension, not lark's
    assert in_grammar("regex", "(", "x").matches is None and "cannot compile" in in_grammar("regex", "(", "x").why
    assert in_grammar("ebnf", "x", "x").matches is None


@effect("grammar-input-unconstrained")
def _(client: httpx.Client) -> None:
    for syntax, definition in (("lark", PATCH_LARK), ("regex", PATCH_REGEX)):
        tool = {**PATCH, "format": {"type": "grammar", "syntax": syntax, "definition": definition}}
        (constrained,) = output(client, {**PATCHING, "tools": [tool]})
        (unconstrained,) = output(client, {**PATCHING, "tools": [tool]}, "grammar-input-unconstrained")
        assert in_grammar(syntax, definition, constrained["input"]).matches is True
        assert in_grammar(syntax, definition, unconstrained["input"]).matches is False
    (freeform,) = output(client, PATCHING, "grammar-input-unconstrained")
    assert freeform["input"] == output(client, PATCHING)[0]["input"]


def conformance(base_url: str) -> dict[str, str]:
    run = run_suite(Target(base_url=base_url), apis=("responses",), include=[CONFORMS],
                    settings=RunSettings(fuzz_examples=0))
    return {verdict.case_id: str(verdict.outcome) for verdict in run.verdicts}


def test_a_grammar_tool_s_input_outside_its_grammar_fails_and_the_clean_server_passes(server):
    cases = {"responses/grammar-tool-regex", "responses/tool-type-custom-grammar"}
    assert conformance(server.base_url) == dict.fromkeys(cases, "OK")
    assert conformance(f"{server.base_url}/faults/grammar-input-unconstrained") == dict.fromkeys(cases, "NON-STRICT")


def _played_custom_grammar(server) -> Observed:
    case = next(case for case in load_cases("responses") if case.id == "responses/tool-type-custom-grammar")
    return play(case, Target(base_url=server.base_url))


def _streamed(status: int, events: list[dict[str, Any]], request: HttpRequest) -> HttpExchange:
    body = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events).encode()
    return HttpExchange(request, status=status, headers={"content-type": "text/event-stream"},
                        chunks=[BodyChunk(0.0, body)])


def test_a_call_s_output_whose_turn_got_no_answer_fails_ungraded_and_an_unanswered_control_leaves_it_unmeasured(server):
    observed = _played_custom_grammar(server)
    check = REGISTRY[GRADED]
    clean = evaluate(check, observed)
    assert clean is not None and clean.outcome is Outcome.OK and "its output taken" in clean.grade.evidence
    output, control = observed.turns["output"], observed.turns["empty-output"]
    failed = _streamed(200, [{"type": "response.failed", "response": {"status": "failed", "usage": {
        "input_tokens": 999}}}], output.exchange.request)
    verdict = evaluate(check, replace(observed, turns={**observed.turns, "output": replace(output, exchange=failed)}))
    assert verdict is not None and verdict.outcome is Outcome.FAILED and verdict.grade is None
    assert "got no answer" in verdict.message and "'failed'" in verdict.message
    assert "Reproduce the turn: curl" in verdict.message and "empty-output" not in verdict.message
    refused = HttpExchange(control.exchange.request, status=500, headers={}, chunks=[BodyChunk(0.0, b"{}")])
    verdict = evaluate(check, replace(observed, turns={**observed.turns, "empty-output": replace(control,
                                                                                                exchange=refused)}))
    assert verdict is not None and verdict.outcome is Outcome.OK and verdict.grade.grade == "honoured"
    assert "not measured: the same turn with an empty output got no answer, HTTP 500" in verdict.grade.evidence
