"""Every check proven able to fail: the suite against each reference-server fault fails exactly the checks
about that defect, and nothing on the clean server.

The table is the claim; the test is its proof. A new check needs a fault that makes it fail and a row here.
"""

from collections import Counter

import pytest

from lmconform.checks import REGISTRY
from lmconform.reference import FAULTS, ReferenceServer
from lmconform.run import run_suite
from lmconform.target import Target
from lmconform.vocabulary import Outcome

FINDINGS = {Outcome.FAILED, Outcome.NON_STRICT, Outcome.INFO}
VOID = {"client.void.no_error", "client.void.tool_call_parsed"}
SDK_RAISES = "client.openai_python.stream_helper"
SDK_DIFFERS = "client.openai_python.matches_stream"
SDK_RESPONSES_RAISES = "client.openai_python.responses_stream"

EXPECTED_FINDINGS: dict[str, set[str]] = {
    "tool-index-missing": {"chat.stream.tool_call.index_present", "chat.stream.tool_call.distinct_index_per_call",
                           SDK_RAISES, *VOID},
    "tool-index-one": {"chat.stream.tool_call.index_zero", SDK_RAISES, *VOID},
    "arguments-object": {"generation.tool_call.arguments_are_strings", "generation.tool_call.arguments_json_object",
                         "client.void.tool_call_parsed", SDK_DIFFERS},
    "id-name-repeated": {"chat.stream.tool_call.id_once", "generation.tool_call.name_once",
                         "client.void.tool_call_parsed", SDK_DIFFERS},
    "arguments-invalid-json": {"generation.tool_call.arguments_json_object", "client.void.tool_call_parsed"},
    "arguments-cumulative": {"generation.tool_call.arguments_json_object", "generation.tool_call.arguments_not_cumulative",
                             "client.void.tool_call_parsed"},
    "two-calls-one-index": {"chat.stream.tool_call.distinct_index_per_call", "client.void.tool_call_parsed", SDK_DIFFERS},
    "type-null-continuation": {"chat.stream.tool_call.type_is_function", SDK_RAISES},
    "empty-response": {"generation.answer.not_empty", "chat.tool_choice.required_calls_a_tool", "client.void.no_error"},
    "json-instead-of-sse": {"sse.content_type.event_stream", SDK_RAISES, *VOID},
    "no-done": {"sse.framing.ends_with_done"},
    "finish-stop-after-tools": {"chat.finish_reason.tool_calls_after_tool_call"},
    "chunk-not-json": {"sse.framing.data_is_json", SDK_RAISES, *VOID},
    "server-error-on-bad-input": {"errors.status.client_error_for_invalid_request", "errors.body.has_error_message",
                                  "chat.tool_choice.object_form_answered"},
    "models-missing": {"http.status.success_for_valid_request", "models.list.openai_shape"},
    "data-after-done": {"sse.framing.nothing_after_done"},
    # The openai SDK decodes the whole body strictly: invalid UTF-8 even in a comment line makes it raise.
    "invalid-utf8": {"sse.framing.well_formed", SDK_RAISES},
    "body-too-large": {"http.body.within_size_cap"},
    "tool-id-missing": {"chat.stream.tool_call.starts_with_id_and_name"},
    "finish-reason-missing": {"chat.stream.finish_reason.exactly_once"},
    "role-missing": {"chat.stream.role.assistant_first"},
    "chunk-id-changes": {"chat.stream.chunk.id_stable"},
    # The SDK's stream helper skips chunks that do not say chat.completion.chunk, then asserts.
    "object-not-chunk": {"chat.object.matches_mode", SDK_RAISES},
    "usage-chunk-unrequested": {"chat.stream.choices.exactly_one"},
    "usage-ignored": {"chat.stream.usage.reported_when_asked"},
    "tool-choice-ignored": {"chat.tool_choice.none_calls_no_tool", "chat.tool_choice.required_calls_a_tool",
                            "chat.tool_choice.object_form_answered", "errors.status.client_error_for_invalid_request",
                            "errors.body.has_error_message"},
    "tool-calls-interleaved": {"generation.order.follows_grammar"},
    # /v1/responses. The generated chains (responses/fuzz-chains) find the chaining defects on their own too:
    # the same chain checks fail on them as on the written chain cases.
    "nested-tools-accepted": {"responses.tools.nested_rejected_or_honoured", "responses.tools.nested_error_is_lmstudio_zod"},
    "flattened-tools-rejected": {"responses.tools.flattened_accepted", "http.status.success_for_valid_request"},
    "chain-ignored": {"responses.chain.history_used", "responses.chain.recall_answered"},
    "unknown-previous-200": {"responses.chain.unknown_id_not_accepted", "responses.chain.unknown_id_is_400_not_found",
                             "errors.status.client_error_for_invalid_request", "errors.body.has_error_message"},
    "unknown-previous-404": {"responses.chain.unknown_id_is_400_not_found"},
    "previous-id-echo-wrong": {"responses.chain.previous_id_echoed"},
    "fork-shares-state": {"responses.chain.fork_independent"},
    "function-call-output-rejected": {"responses.chain.function_call_output_round_trip"},
    "call-id-missing": {"responses.function_call.item_complete"},
    # The delta sent before its item is lost to every reader that needs the item first, the normaliser included.
    "events-out-of-order": {"responses.stream.items_opened_before_parts", "generation.tool_call.arguments_json_object",
                            SDK_RESPONSES_RAISES},
    "no-response-completed": {"responses.stream.lifecycle", "responses.tools.flattened_accepted", SDK_RESPONSES_RAISES},
    "arguments-done-mismatch": {"responses.stream.deltas_match_done", "client.openai_python.responses_matches_stream"},
    "arguments-done-missing": {"responses.stream.function_call_arguments_done"},
    "duplicate-output-index": {"responses.stream.indexes_consistent", "responses.stream.items_opened_before_parts",
                               SDK_RESPONSES_RAISES},
    "sequence-not-increasing": {"responses.stream.sequence_increasing"},
    "sequence-number-missing": {"responses.stream.sequence_present"},
    "event-field-mismatch": {"responses.stream.event_field_matches_type"},
}
# Differential mode: the clean reference server as the upstream, the same server with a fault as the "proxy".
DIFFERENTIAL_FINDINGS: dict[str | None, set[str]] = {
    None: set(),
    "no-done": {"proxy.diff.framing_preserved"},
    "finish-stop-after-tools": {"proxy.diff.generation_preserved"},
    "arguments-invalid-json": {"proxy.diff.generation_preserved"},
    "server-error-on-bad-input": {"proxy.diff.status_preserved", "proxy.diff.error_body_preserved"},
    "no-response-completed": {"proxy.diff.event_types_preserved", "proxy.diff.generation_preserved"},
}
# Faults whose defect leaves no verdict to give (only ERROR), tested on their own below.
NO_VERDICT_FAULTS = {"stall"}


def findings(server: ReferenceServer, fault: str | None) -> tuple[set[str], Counter]:
    base = server.base_url + (f"/faults/{fault}" if fault else "")
    # A 1 MiB cap proves the body-cap finding as well as the default would, without reading 32 MiB per case.
    run = run_suite(Target(base_url=base, read_timeout=5, profile="reference", max_body_bytes=1 << 20))
    return {v.check.id for v in run.verdicts if v.outcome in FINDINGS}, Counter(v.outcome for v in run.verdicts)


def test_the_clean_server_passes_every_check(server):
    found, outcomes = findings(server, None)
    assert found == set()
    assert set(outcomes) == {Outcome.OK}


@pytest.mark.parametrize("fault", sorted(EXPECTED_FINDINGS))
def test_a_fault_fails_exactly_the_checks_about_it(server, fault):
    found, outcomes = findings(server, fault)
    assert found == EXPECTED_FINDINGS[fault], f"unexpected: {found - EXPECTED_FINDINGS[fault]}, " \
                                              f"missing: {EXPECTED_FINDINGS[fault] - found}"
    if fault != "body-too-large":  # a cut-off body leaves the other checks without a verdict
        assert Outcome.ERROR not in outcomes


@pytest.mark.parametrize("fault", list(DIFFERENTIAL_FINDINGS), ids=str)
def test_differential_mode_reports_what_the_proxy_changed(server, fault):
    proxy = server.base_url + (f"/faults/{fault}" if fault else "")
    run = run_suite(Target(base_url=proxy, fuzz_examples=0), include=["proxy.*"], upstream=Target(base_url=server.base_url))
    assert {v.check.id for v in run.verdicts if v.outcome in FINDINGS} == DIFFERENTIAL_FINDINGS[fault]
    assert {v.outcome for v in run.verdicts} <= FINDINGS | {Outcome.OK}


def test_every_fault_is_in_the_table():
    assert set(FAULTS) == set(EXPECTED_FINDINGS) | NO_VERDICT_FAULTS


def test_every_check_is_failed_by_some_fault():
    proven = set().union(*EXPECTED_FINDINGS.values(), *DIFFERENTIAL_FINDINGS.values())
    assert set(REGISTRY) - proven == set(), "checks never seen failing"
    assert proven <= set(REGISTRY), "the table names checks that do not exist"
