"""Real servers — llama-cpp-python, llama.cpp's own llama-server, and the LiteLLM proxy in front of the reference
server and of llama-server — each run through the whole suite. The verdicts must be exactly those its
fixtures/targets/<name>.toml expects: a new failure, a listed failure that now passes, or a listed failure that
matches nothing all fail the test. The facts the project documents about each server are asserted on the evidence.

Each server is installed once per machine (`make targets`; the fixtures install what is missing) and started once
per module on a free loopback port, with Gemma 3 270M at temperature 0 where a model answers. Both llama.cpp servers
run the same CPU code on every x86-64 machine (llama-cpp-python built without native flags, llama-server pinned to
one CPU variant of Debian's ggml), so the verdicts a model decides come out the same everywhere; the expected-verdict
files mark those rows model-dependent, and one more run under another CPU variant shows the files hold there too.

The same runs, with lmconform's reference server run the same way as the baseline, make what the project publishes:
each writes its results record to reports/real/, the compatibility matrix built from them must equal
docs/compatibility.{md,html}, and each real server's answers must keep the shapes stored for its version in
fixtures/snapshots/<server>-<version>/ (`make matrix-real`, `make snapshots-real` write them instead).
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from lmconform.checks.evaluate import Verdict
from lmconform.checks.registry import REGISTRY
from lmconform.expectations import ExpectationError, Expectations, Expected
from lmconform.files import write_json_atomically
from lmconform.run import Run, discover
from lmconform.target import Target
from lmconform.verdicts.causes import cause_of, known_causes, words_of
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.profiles import EFFECT_GRADE
from lmconform.verdicts.records import results_of
from lmconform.vocabulary import Outcome
from tools.targets import (
    TargetFile,
    TargetStartError,
    differences,
    litellm_proxy,
    llama_cpp_python,
    llama_server,
    load_target_file,
    reference_server,
    run_target_file,
    table,
)
from tools.targets.install import CPU_VARIANT, CPU_VARIANT_FLAGS, cpu_flags
from tools.targets.process import free_port, start
from tools.targets.published import (
    COMPATIBILITY_HTML,
    COMPATIBILITY_MD,
    WRITE_COMPATIBILITY,
    WRITE_SNAPSHOTS,
    compare_shapes,
    compatibility_pages,
    page_difference,
    without_cache_counts,
)
from tools.targets.rewrite import WRITE_EXPECTED, rewritten, seen_now

# One worker runs every real server: the published matrix is built from all their runs, and each server is
# started once for all its tests; the other workers take the rest of the tests meanwhile (`make test` runs one worker
# more than the cores). The run under another CPU variant starts a llama-server of its own and feeds nothing
# published: it is a group of its own (the two names make one), which another worker plays meanwhile, so that the
# longest group, this one, is shorter by its minutes.
pytestmark = pytest.mark.xdist_group("real-servers")

ROOT = Path(__file__).resolve().parent.parent
TARGET_FILES = ROOT / "fixtures" / "targets"
RECORDS = ROOT / "reports" / "real"  # each run's results record, for `lmconform matrix` and CI artifacts
# The variant that stands in for a machine with other CPU features: AVX-512 where this CPU has it, else AVX without
# AVX2. A variant's code is the same on every machine that can run it, so this comparison is too.
OTHER_CPU_VARIANTS = (("skylakex", frozenset({"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"})),
                      ("sandybridge", frozenset({"sse4_2", "avx"})))

if not CPU_VARIANT_FLAGS <= cpu_flags():
    pytest.skip(f"the real servers run ggml's {CPU_VARIANT} CPU code (AVX2, FMA, F16C, BMI2), which this CPU lacks: "
                f"{', '.join(sorted(CPU_VARIANT_FLAGS - cpu_flags()))}", allow_module_level=True)


@dataclass(frozen=True)
class TargetRun:
    spec: TargetFile
    run: Run
    seconds: float


def _spec(name: str) -> TargetFile:
    return load_target_file(TARGET_FILES / f"{name}.toml")


def _run(spec: TargetFile, running, upstream_url: str | None = None, record: bool = True) -> TargetRun:
    started = time.monotonic()
    run = run_target_file(spec, running, upstream_url)
    if record:
        write_json_atomically(RECORDS / f"{spec.path.stem}.json", run.results())
    return TargetRun(spec, run, time.monotonic() - started)


@pytest.fixture(scope="module")
def reference_run():
    """The baseline: lmconform's reference server, started and run as the real servers are."""
    with reference_server() as running:
        return _run(_spec("reference"), running)


@pytest.fixture(scope="module")
def llama_server_running():
    """Shared by the llama-server run and the LiteLLM run in front of it."""
    with llama_server() as running:
        yield running


@pytest.fixture(scope="module")
def llama_cpp_python_running():
    """Shared by the llama-cpp-python run and the reference bridge's run in front of it."""
    with llama_cpp_python() as running:
        yield running


@pytest.fixture(scope="module")
def llama_cpp_python_run(llama_cpp_python_running):
    return _run(_spec("llama-cpp-python"), llama_cpp_python_running)


@pytest.fixture(scope="module")
def bridge_llama_cpp_python_run(llama_cpp_python_running):
    """The VS Code language-model bridge protocol with a real model behind it: `lmconform bridge` in front of
    llama-cpp-python, through the vscodelm cases."""
    return _run(_spec("lmconform-bridge-llama-cpp-python"), llama_cpp_python_running)


@pytest.fixture(scope="module")
def llama_server_run(llama_server_running):
    return _run(_spec("llama-server"), llama_server_running)


def other_cpu_variant() -> str:
    return next(variant for variant, flags in OTHER_CPU_VARIANTS if flags <= cpu_flags())


@pytest.fixture(scope="module")
def llama_server_other_variant_run():
    variant = other_cpu_variant()
    spec = _spec("llama-server")
    spec = replace(spec, agents=(), exclude_cases=(*spec.exclude_cases, *LEFT_TO_THE_PINNED_RUN))
    with llama_server(cpu_variant=variant, label=f"llama-server-{variant}") as running:
        return _run(spec, running, record=False)


# What the second CPU variant does not play again, to keep make test within its time: the keyword matrix (each case
# played three times, pass^3), the agents (each first request is refused for its length before the model computes
# a token, so no CPU code can change their rows) and the two Messages requests for extended thinking (a thinking
# budget is at least 1,024 tokens and max_tokens must exceed it: each answer is 1,100 tokens of text, 30 s of
# generation, and every check of theirs reads the form of a long text, which other tokens do not change), and the
# Messages request without max_tokens (accepted before the model computes a token; what follows is 90 s and more of
# writing until the context is full, and its checks read the answer's form and its stop_reason, which other tokens do
# not change). The pinned run judges them.
LEFT_TO_THE_PINNED_RUN = ("chat/schema-keyword-*", "*/agent-*", "messages/thinking-stream",
                          "messages/recorded-anthropic-python-messages-5", "messages/max-tokens-missing")


@pytest.fixture(scope="module")
def litellm_reference_run(server):
    spec = _spec("litellm-reference")
    assert discover(Target(server.base_url)).model == spec.model
    with litellm_proxy(server.base_url, spec.model, label=spec.label) as running:
        return _run(spec, running, upstream_url=server.base_url)


@pytest.fixture(scope="module")
def litellm_llama_server_run(llama_server_running):
    spec = _spec("litellm-llama-server")
    with litellm_proxy(llama_server_running.base_url, spec.model, label=spec.label) as running:
        return _run(spec, running)


# What a test of real servers needs: the servers (make targets installs them), and root where llama-server runs,
# in its Debian chroot. `make check` leaves such tests out.
REAL = pytest.mark.real_server
AS_ROOT = (pytest.mark.real_server, pytest.mark.root)
NEEDS_ROOT = {"llama-server", "litellm-llama-server"}

# In the order of the published matrix's columns: the baseline, the servers, the proxy in front of each.
RUNS = {
    "reference": "reference_run",
    "llama-cpp-python": "llama_cpp_python_run",
    "lmconform-bridge-llama-cpp-python": "bridge_llama_cpp_python_run",
    "llama-server": "llama_server_run",
    "litellm-reference": "litellm_reference_run",
    "litellm-llama-server": "litellm_llama_server_run",
}


def test_every_target_file_has_a_run():
    assert sorted(path.stem for path in TARGET_FILES.glob("*.toml")) == sorted(RUNS)


@pytest.mark.parametrize("key", ["agent_timeout", "read_timeout"])
@pytest.mark.parametrize("timeout", ["0", "-5", "true", '"45"'])
def test_a_target_file_refuses_a_timeout_that_is_not_a_number_of_seconds(tmp_path, key, timeout):
    path = tmp_path / "t.toml"
    path.write_text(f'label = "t"\nstart = "s"\n[run]\nagents = ["codex"]\n{key} = {timeout}\n')
    with pytest.raises(ExpectationError, match=f"{key} is a number of seconds above 0"):
        load_target_file(path)
    path.write_text('label = "t"\nstart = "s"\n[run]\nagents = ["codex"]\nagent_timeout = 45\nread_timeout = 90\n')
    spec = load_target_file(path)
    assert spec.settings.agent_seconds == 45 and spec.target("http://127.0.0.1:1").read_timeout == 90


def runs(names) -> list:
    """The runs as test parameters, each marked as a run of the real-server harness (the reference server's baseline
    too, started and run as the real servers are), and as needing root where llama-server runs."""
    return [pytest.param(name, marks=AS_ROOT if name in NEEDS_ROOT else REAL) for name in names]


@pytest.mark.parametrize("name", runs(sorted(RUNS)))
def test_the_verdicts_are_exactly_the_expected_ones(name, request):
    target_run = request.getfixturevalue(RUNS[name])
    print(f"{name}: {len(target_run.run.verdicts)} verdicts in {target_run.seconds:.0f} s")
    if os.environ.get(WRITE_EXPECTED):  # `make catalogue`: the file written again from this run
        path, target = target_run.spec.path, target_run.run.target
        text, changes = rewritten(path.read_text(), target_run.spec.expectations, target_run.run.verdicts,
                                  seen_now(target.label, target.server_version))
        path.write_text(text, encoding="utf-8")
        print(f"{path.name}: " + ("; ".join(changes) if changes else "unchanged"))
        return
    found = differences(target_run.run.verdicts, target_run.spec.expectations)
    assert not found, (f"{name} ({target_run.spec.start}): {len(found)} verdicts differ from "
                       f"{target_run.spec.path.name}\n{table(found)}")


SEEN_ON_A_REAL_SERVER = [cause for cause in known_causes() if "server" in cause.shown_by]


@pytest.mark.parametrize("cause", [pytest.param(cause, id=cause.id, marks=runs([cause.shown_by["server"]])[0].marks)
                                   for cause in SEEN_ON_A_REAL_SERVER])
def test_each_known_cause_seen_on_a_real_server_explains_what_that_server_does(cause, request):
    target_run = request.getfixturevalue(RUNS[cause.shown_by["server"]])
    explained = [verdict for verdict in target_run.run.verdicts
                 if verdict.outcome not in (Outcome.OK, Outcome.UNSUPPORTED)
                 and fnmatch.fnmatchcase(verdict.case_id, cause.shown_by.get("case", "*"))
                 and cause_of(verdict.check.id, verdict.case_id, words_of(verdict.message, verdict.evidence)) is cause]
    assert explained, f"{cause.id}: no finding against {cause.shown_by['server']} has this cause"
    agent = cause.shown_by.get("agent")
    if agent:  # the agent's line of the headline is graded as the cause says, with its way round
        record = results_of(target_run.run.results(), Path("run.json"))
        line = next(line for line in build_headline(record.results).clients
                    if line.key.startswith(f"agent-{agent}-") and line.basis == "run live")
        assert line.status == EFFECT_GRADE[cause.clients[agent].effect] and line.cause is cause, line


@pytest.mark.real_server
@pytest.mark.root
def test_the_published_compatibility_matrix_is_what_the_real_servers_do(request):
    """docs/compatibility.{md,html} are built from these very runs; a verdict, a reason or a version that changed
    shows as a diff here, so the published page never goes stale silently."""
    records = [(name, request.getfixturevalue(fixture).run.results()) for name, fixture in RUNS.items()]
    markdown, page = compatibility_pages(records)
    if os.environ.get(WRITE_COMPATIBILITY):
        COMPATIBILITY_MD.write_text(markdown, encoding="utf-8")
        COMPATIBILITY_HTML.write_text(page, encoding="utf-8")
        print(f"wrote {COMPATIBILITY_MD} and {COMPATIBILITY_HTML}")
        return
    difference = page_difference(COMPATIBILITY_MD, markdown)
    assert not difference, f"docs/compatibility.md no longer matches the real servers (`make matrix-real` " \
                           f"rewrites it and the HTML page):\n{difference}"
    assert not page_difference(COMPATIBILITY_HTML, page), "docs/compatibility.html is stale: `make matrix-real`"


@pytest.mark.parametrize("name", runs(name for name in RUNS if name != "reference"))
def test_each_real_server_answers_in_the_shapes_stored_for_its_version(name, request):
    """A new version of a server shows as a readable diff of the shapes of its answers. Where the model decides
    whether to call a tool, a different choice is named as the model's and that case is not compared."""
    run = request.getfixturevalue(RUNS[name]).run
    comparison = compare_shapes(run, write=bool(os.environ.get(WRITE_SNAPSHOTS)))
    print(f"{name}: shapes in {comparison.folder.name}\n{comparison.report()}".rstrip())
    assert comparison.holds, comparison.report()


@pytest.mark.real_server
@pytest.mark.root
@pytest.mark.xdist_group("another-cpu-variant")
def test_the_llama_server_expectations_hold_under_another_cpu_variant(llama_server_other_variant_run):
    """Another machine, in one: the same server and model on other CPU code pick other tokens here and there, and
    the file must absorb that in its model-dependent rows, never in a wire fact. (The pinned run's CPU code is
    asserted by test_each_real_server_records_how_it_was_built.)"""
    other = llama_server_other_variant_run.run.target.fingerprint["build"]["cpu_variant"]
    print(f"llama-server expectations compared under the CPU variant {other} (the pinned run's is {CPU_VARIANT})")
    assert other == other_cpu_variant()
    spec = llama_server_other_variant_run.spec
    found = [difference for difference in differences(llama_server_other_variant_run.run.verdicts, spec.expectations)
             if not (difference.kind == "stale entry"
                     and any(fnmatch.fnmatchcase(difference.case, glob) for glob in LEFT_TO_THE_PINNED_RUN))]
    assert not found, f"under the {other} CPU variant, {len(found)} verdicts differ from {spec.path.name}\n{table(found)}"


@pytest.mark.real_server
@pytest.mark.root
def test_each_real_server_records_how_it_was_built(llama_cpp_python_run, llama_server_run):
    """The CPU code a verdict was computed with is part of the run's fingerprint, and so of every report."""
    build = llama_cpp_python_run.run.target.fingerprint["build"]
    assert "-DGGML_NATIVE=OFF" in build["cmake_args"] and "AVX2 = 1" in build["system_info"]
    assert "AVX512 = 1" not in build["system_info"] and build["threads"] == 1
    assert llama_server_run.run.target.fingerprint["build"] == {"cpu_variant": CPU_VARIANT, "pinned": True,
                                                                "threads": 1}
    assert llama_server_run.run.results()["target"]["fingerprint"]["build"]["cpu_variant"] == CPU_VARIANT


def verdict(run: Run, case: str, check: str) -> Verdict:
    return next(v for v in run.verdicts if v.case_id == case and v.check.id == check)


def chunks(run: Run, case: str) -> list[dict]:
    """The JSON payloads of a case's stream, `[DONE]` left out."""
    events = run.observations()[case].exchange.sse.events
    return [json.loads(event.data) for event in events if event.data != "[DONE]"]


@pytest.mark.real_server
def test_llama_cpp_python_repeats_id_and_name_in_every_chunk_which_corrupts_void_and_the_sdk(llama_cpp_python_run):
    run = llama_cpp_python_run.run
    calls = [call for chunk in chunks(run, "chat/tool-choice-object")
             for call in chunk["choices"][0]["delta"].get("tool_calls") or []]
    assert len(calls) > 1
    assert all(call["id"] == calls[0]["id"] and call["function"]["name"] == "get_time" for call in calls)
    # Both accumulators concatenate what each delta sends: the name comes out once per chunk.
    corrupted = "get_time" * len(calls)
    for check in ("client.void.tool_call_parsed", "client.openai_python.matches_stream"):
        found = verdict(run, "chat/tool-choice-object", check)
        assert found.outcome is Outcome.FAILED and repr(corrupted) in found.message, found.message


@pytest.mark.real_server
def test_llama_cpp_python_answers_an_invalid_request_with_a_server_error(llama_cpp_python_run):
    # Its request validation errors are all answered 500 (`messages: "bad"` too).
    run = llama_cpp_python_run.run
    found = verdict(run, "chat/invalid-tool-choice-string", "errors.status.client_error_for_invalid_request")
    assert found.outcome is Outcome.FAILED and "HTTP 500" in found.message
    error = run.observations()["chat/invalid-tool-choice-string"].exchange.json["error"]
    assert error["type"] == "internal_server_error"
    assert "Input should be 'none', 'auto' or 'required'" in error["message"]


@pytest.mark.real_server
def test_llama_cpp_python_has_no_responses_route(llama_cpp_python_run):
    found = verdict(llama_cpp_python_run.run, "responses/text-stream", "responses.stream.lifecycle")
    assert found.outcome is Outcome.UNSUPPORTED and "HTTP 404" in found.detail


@pytest.mark.real_server
def test_the_reference_bridge_streams_a_real_models_answer_and_stops_it_on_cancel(bridge_llama_cpp_python_run):
    run = bridge_llama_cpp_python_run.run
    assert run.target.bridge_command and not run.target.base_url
    plain = run.observations()["vscodelm/plain-turn"].exchange
    assert plain.succeeded and len([m for m in plain.messages if m.value.get("method") == "lm/responsePart"]) > 1
    cancelled = verdict(run, "vscodelm/cancel-while-streaming", "vscodelm.cancel.strict_complete")
    assert cancelled.outcome is Outcome.OK  # judged: the model was still streaming when the cancel came


@pytest.mark.real_server
@pytest.mark.root
def test_llama_server_streams_responses_without_sequence_number_or_output_index(llama_server_run):
    run = llama_server_run.run
    events = chunks(run, "responses/text-stream")
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert not any("sequence_number" in event or "output_index" in event for event in events)
    assert verdict(run, "responses/text-stream", "responses.stream.sequence_present").outcome is Outcome.NON_STRICT
    # Without output_index the openai SDK's responses.stream() cannot place an item.
    sdk = verdict(run, "responses/text-stream", "client.openai_python.responses_stream")
    assert sdk.outcome is Outcome.FAILED and "TypeError" in sdk.message


@pytest.mark.real_server
@pytest.mark.root
def test_llama_server_calls_a_required_tool_but_streams_it_without_function_call_arguments_done(llama_server_run):
    run = llama_server_run.run
    types = [event["type"] for event in chunks(run, "responses/calculate-tool-stream")]
    assert "response.function_call_arguments.delta" in types and "response.output_item.done" in types
    assert "response.function_call_arguments.done" not in types
    found = verdict(run, "responses/calculate-tool-stream", "responses.stream.function_call_arguments_done")
    assert found.outcome is Outcome.NON_STRICT and "response.output_item.done without it" in found.message
    # On chat completions the same template gives a well-formed call: index 0, id and name once, JSON arguments.
    for check in ("chat.tool_choice.required_calls_a_tool", "chat.stream.tool_call.index_zero",
                  "chat.stream.tool_call.id_once", "generation.tool_call.arguments_json_object"):
        assert verdict(run, "chat/tool-choice-required", check).outcome is Outcome.OK, check


@pytest.mark.real_server
@pytest.mark.root
def test_llama_server_refuses_previous_response_id(llama_server_run):
    found = verdict(llama_server_run.run, "responses/paris-population-chain", "responses.chain.previous_id_echoed")
    assert found.outcome is Outcome.FAILED
    assert "HTTP 400" in found.message and "llama.cpp does not support 'previous_response_id'" in found.evidence


@pytest.mark.real_server
def test_litellm_appends_done_to_responses_streams_and_rewraps_upstream_errors(litellm_reference_run):
    run = litellm_reference_run.run
    events = run.observations()["responses/text-stream"].exchange.sse.events
    assert events[-1].data == "[DONE]" and json.loads(events[-2].data)["type"] == "response.completed"
    error = run.observations()["responses/unknown-previous-id"].exchange.json["error"]
    assert error["code"] == "400" and error["param"] is None and "previous_response_not_found" in error["message"]


@pytest.mark.real_server
def test_the_differential_mode_reports_litellms_rewrapping_of_responses_streams_and_errors(litellm_reference_run):
    run = litellm_reference_run.run
    framing = verdict(run, "responses/text-stream", "proxy.diff.framing_preserved")
    assert framing.outcome is Outcome.INFO
    assert "data: [DONE]: False (upstream)" in framing.message and "event: lines: True (upstream)" in framing.message
    types = verdict(run, "responses/text-stream", "proxy.diff.event_types_preserved")
    assert types.outcome is Outcome.NON_STRICT and "response.completed → data: [DONE]" in types.message
    error = verdict(run, "responses/unknown-previous-id", "proxy.diff.error_body_preserved")
    assert error.outcome is Outcome.NON_STRICT
    assert '"code": "previous_response_not_found", "param": "previous_response_id"' in error.message
    assert '"code": "400", "param": null' in error.message


def test_prompt_cache_counts_are_not_the_servers_format():
    usage = {"type": "message_delta", "usage": {"input_tokens": "integer", "output_tokens": "integer"}}
    cached = {"type": "message_delta", "usage": {**usage["usage"], "cache_read_input_tokens": "integer"}}
    other = {"type": "message_delta", "usage": {**usage["usage"], "server_tool_use": "object"}}
    assert without_cache_counts(json.dumps([usage])) == without_cache_counts(json.dumps([cached]))
    assert without_cache_counts(json.dumps([usage])) != without_cache_counts(json.dumps([other]))


def test_differences_are_found_both_ways():
    expectations = Expectations("known.toml", None, (
        Expected("client.void.tool_call_parsed", "chat/*", frozenset({"FAILED"}), "repeats the name", ""),
        Expected("chat.stream.tool_call.index_zero", "chat/a", frozenset({"FAILED"}), "numbers calls from 1", ""),
        Expected("errors.body.has_error_message", "chat/gone", frozenset({"FAILED"}), "no longer a case", ""),
        Expected("generation.tool_call.arguments_json_object", "chat/*", frozenset({"OK", "FAILED"}),
                 "cut at max_tokens, or not", "", model_dependent=True),
        Expected("chat.finish_reason.length_at_max_tokens", "chat/a", frozenset({"OK", "NON-STRICT"}),
                 "the answer may end before the cap, which leaves the check nothing to judge", "", model_dependent=True),
    ))
    arguments = REGISTRY["generation.tool_call.arguments_json_object"]
    verdicts = [
        Verdict("chat/a", REGISTRY["client.void.tool_call_parsed"], Outcome.FAILED),  # as expected
        Verdict("chat/b", REGISTRY["client.void.tool_call_parsed"], Outcome.OK),  # the glob names it: a pass
        Verdict("chat/a", REGISTRY["chat.stream.tool_call.index_zero"], Outcome.ERROR),  # another outcome
        Verdict("chat/a", REGISTRY["sse.framing.ends_with_done"], Outcome.NON_STRICT),  # new
        Verdict("chat/a", arguments, Outcome.OK),  # model-dependent: within its set
        Verdict("chat/b", arguments, Outcome.FAILED),  # within its set
        Verdict("chat/c", arguments, Outcome.ERROR),  # out of its set
    ]
    found = differences(verdicts, expectations)
    assert [(row.kind, row.case, row.check) for row in found] == [
        ("unexpected pass", "chat/b", "client.void.tool_call_parsed"),
        ("expected FAILED, got ERROR", "chat/a", "chat.stream.tool_call.index_zero"),
        ("unexpected NON-STRICT", "chat/a", "sse.framing.ends_with_done"),
        ("expected OK or FAILED (model-dependent), got ERROR", "chat/c", arguments.id),
        ("stale entry", "chat/gone", "errors.body.has_error_message"),
    ]
    assert table(found).splitlines()[0].split() == ["difference", "case", "check", "detail"]


def test_a_server_that_exits_at_start_is_reported_with_its_log(tmp_path):
    command = [sys.executable, "-c", "print('no model file'); raise SystemExit(3)"]
    with pytest.raises(TargetStartError, match="exited with status 3") as raised:
        start(command, port=free_port(), label="broken", model="m", log_path=tmp_path / "broken.log")
    assert "no model file" in str(raised.value)


def test_the_proxy_is_only_pointed_at_loopback():
    with pytest.raises(ValueError, match="loopback"), litellm_proxy("http://upstream.invalid:1234", "m"):
        pass
