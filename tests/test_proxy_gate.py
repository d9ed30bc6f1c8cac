"""The proxy gate, as a proxy project's CI runs it: the reference server as the upstream, clean and then with one
fault at a time, LiteLLM in the middle, lmconform in front. Which upstream defects the proxy repairs, which it
passes through and which it turns into others must be exactly fixtures/gates/litellm.toml. So must what it does
with the clean server's answers in generated, legal but unusual wire forms (its `[stream_fuzz]` section).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import budget
import pytest
from faulty_proxies import routing_app, running_app

from lmconform.apis.messages.reference import stages as messages_stages
from lmconform.cli import main
from lmconform.expectations import ExpectationError
from lmconform.gate import (
    CASES_FOR_FAULT_API,
    GATE_FAULTS,
    PROXIED_RUN_CASES,
    GateRow,
    GateTargets,
    gate_differences,
    gate_row,
    gate_table,
    gate_toml,
    load_gate_file,
    run_gate,
)
from lmconform.reference import ReferenceServer
from lmconform.reference.faults import FAULTS
from lmconform.run import run_suite
from lmconform.run.run import TargetUnreachable
from lmconform.run.transparency import fuzz_streams, load_expected, stream_differences, stream_table, stream_toml
from lmconform.target import Target
from tools.catalogue import cases_judged_by
from tools.catalogue import load as load_catalogue
from tools.targets import litellm_proxy

# The gate's tests share one LiteLLM proxy: they run together on one worker (`make test` runs several).
pytestmark = pytest.mark.xdist_group("proxy-gate")

GATE_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "gates" / "litellm.toml"
# LMCONFORM_WRITE_GATE=1 rewrites the file's rows from what LiteLLM does now, keeping the reasons of the rows that stay
# and its opening comments; a new row's reason is left to write (test_every_expected_row_says_why fails until it is).
WRITE_GATE = "LMCONFORM_WRITE_GATE"
STREAM_SECTION = "[stream_fuzz]"


def rewrite_gate_file(faults: str | None = None, stream_fuzz: str | None = None) -> None:
    """The gate file with its `[[fault]]` rows or its `[stream_fuzz]` section replaced."""
    text = GATE_FILE.read_text(encoding="utf-8")
    head, _, section = text.partition(STREAM_SECTION)
    opening = head[:head.index("[[fault]]")]
    rows = head[len(opening):].rstrip("\n") + "\n"
    GATE_FILE.write_text(opening + (faults or rows) + "\n" + (stream_fuzz or STREAM_SECTION + section),
                         encoding="utf-8")
UPSTREAM_MODEL = "lmconform-reference"
CATALOGUE = load_catalogue()
MODEL_TEMPLATE = UPSTREAM_MODEL + "+{fault}"
ANTHROPIC_MODEL = UPSTREAM_MODEL + "-anthropic"  # the clean upstream through the anthropic/ provider


@pytest.fixture(scope="module")
def gate(server: ReferenceServer):
    spec = load_gate_file(GATE_FILE)
    faults = GATED  # every gated fault, so that one without a row shows as one
    # One proxy for every fault: a model name per fault, each routed to that fault's prefix of the one server. The
    # Messages faults and a clean Messages route go through the anthropic/ provider, whose /v1/messages is the
    # upstream's; the openai/ provider would answer a Messages request from the upstream's chat completions.
    routes = {"openai": {}, "anthropic": {ANTHROPIC_MODEL: server.base_url}}
    for fault in faults:
        routes["anthropic" if FAULTS[fault].api == "messages" else "openai"][MODEL_TEMPLATE.format(fault=fault)] = (
            f"{server.base_url}/faults/{fault}")

    def play(proxy):
        targets = GateTargets(proxy.base_url, server.base_url, UPSTREAM_MODEL, MODEL_TEMPLATE, proxy.api_key,
                              {"messages": ANTHROPIC_MODEL})
        found = {row.fault: row for row in run_gate(faults, targets, cases_of=cases_showing,
                                                    proxied_where_it_fails=True)}
        return replayed_where_they_differ(found, spec.rows, lambda differing: run_gate(
            differing, targets, cases_of=cases_showing, proxied_where_it_fails=True))

    return spec, played_through_litellm(play, server, routes=routes["openai"], anthropic_routes=routes["anthropic"],
                                        label="litellm-gate")


def replayed_where_they_differ(found: dict[str, GateRow], expected: tuple[GateRow, ...],
                               replay: Callable[[list[str]], list[GateRow]]) -> dict[str, GateRow]:
    """The rows, each one that differs from the file played once more: a row counts as played again when it then
    matches. LiteLLM has races of its own under load: on a busy CI runner it once answered one valid request of
    `empty-response` with an error where every other run, loaded or idle, forwarded the empty answer. A change of
    LiteLLM's or of lmconform's shows in both plays; what was seen the first time is printed."""
    differing = [fault for fault, row in found.items() if gate_differences([row], expected)]
    replayed = {row.fault: row for row in replay(differing)} if differing else {}
    for fault, row in replayed.items():
        if not gate_differences([row], expected):
            print(f"{fault}: the first play differed, the second matched:", *gate_differences([found[fault]], expected))
            found[fault] = row
    return found


def cases_showing(fault: str) -> frozenset[str]:
    """The cases a fault is played on: those its catalogue row's checks judge. Straight from the upstream the fault
    fails nothing on the others (the catalogue's test plays it on every case to prove that), so there the clean runs
    stand for it, and the gate sends about half the requests it would. Through LiteLLM it then plays only the cases
    the fault's straight run failed (run_gate's proxied_where_it_fails), which halves its requests again: 3,386
    instead of 6,584, with the same rows."""
    return frozenset(cases_judged_by(CATALOGUE.server[fault].findings, CASES_FOR_FAULT_API[FAULTS[fault].api]))


LITELLM_ATTEMPTS = 3


def played_through_litellm(play, server: ReferenceServer, **proxy_options):
    """What `play(proxy)` finds with LiteLLM in front of the reference server; played again if LiteLLM's process died
    under it. Its interpreter has segfaulted in the middle of a run on a loaded machine (exit -11, once in many runs
    here, twice in a row on a slower CI machine, never again with the same requests): that is not a way of handling a
    request, and the run after it found only an unreachable proxy. The fault handler's stack, which the log keeps,
    goes into the failure when every attempt died."""
    for _ in range(LITELLM_ATTEMPTS):
        with litellm_proxy(server.base_url, UPSTREAM_MODEL, **proxy_options) as proxy:
            try:
                found = play(proxy)
            except TargetUnreachable:
                if proxy.process.poll() is None:
                    raise
            exited = proxy.process.poll()
        if exited is None:
            return found
    log = proxy.log_path.read_text(errors="replace")
    crash = log[log.rfind("Fatal Python error"):][:3000] if "Fatal Python error" in log else "(no stack in the log)"
    pytest.fail(f"LiteLLM exited {LITELLM_ATTEMPTS} times (last status {exited}) while lmconform played through it; "
                f"see {proxy.log_path}. The last crash:\n{crash}")


@pytest.mark.real_server
def test_what_litellm_does_with_each_upstream_defect_is_exactly_the_expected(gate):
    spec, found = gate
    print(gate_table(found.values()))
    if os.environ.get(WRITE_GATE):
        rewrite_gate_file(faults=gate_toml(found.values(), {row.fault: row.reason for row in spec.rows},
                                           {row.fault: row.varies for row in spec.rows}))
        return
    differences = gate_differences(list(found.values()), spec.rows)
    assert not differences, f"{spec.path.name}:\n" + "\n".join(differences) + "\n\n" + gate_table(found.values())


@pytest.mark.real_server
def test_litellm_repairs_a_missing_index_object_arguments_and_a_missing_done(gate):
    _, found = gate
    assert "chat.stream.tool_call.index_present" in found["tool-index-missing"].repaired
    assert "client.openai_python.stream_helper" in found["tool-index-missing"].repaired
    assert "generation.tool_call.arguments_are_strings" in found["arguments-object"].repaired
    assert found["no-done"].repaired == {"sse.framing.ends_with_done"} and not found["no-done"].passed_through


@pytest.mark.real_server
def test_litellm_passes_index_one_repeated_id_and_name_and_cumulative_arguments_through(gate):
    _, found = gate
    assert {"chat.stream.tool_call.index_zero", "client.void.tool_call_parsed"} <= found["tool-index-one"].passed_through
    assert {"chat.stream.tool_call.id_once", "generation.tool_call.name_once"} <= found["id-name-repeated"].passed_through
    assert "generation.tool_call.arguments_not_cumulative" in found["arguments-cumulative"].passed_through
    assert not (found["tool-index-one"].repaired or found["id-name-repeated"].repaired
                or found["arguments-cumulative"].repaired)


@pytest.mark.real_server
def test_litellm_relays_the_upstreams_messages_events_as_they_are_but_refuses_a_request_without_max_tokens(gate):
    _, found = gate
    assert "messages.stream.block_indexes" in found["messages-block-index-from-one"].passed_through
    assert "messages.stream.lifecycle" in found["messages-no-message-stop"].passed_through
    assert "messages.stop_reason.known_value" in found["messages-stop-reason-openai"].passed_through
    answers = [fault for fault in found if FAULTS[fault].stage in (messages_stages.OBJECT, messages_stages.EVENTS,
                                                                   messages_stages.FRAMES)]
    # One check aside: under messages-end-turn-after-tool-use, the answer cut at max_tokens comes through LiteLLM with
    # stop_reason max_tokens, which the upstream replaced by end_turn (fixtures/gates/litellm.toml).
    repaired = {fault: found[fault].repaired - {"messages.stop_reason.max_tokens_at_cap"} for fault in answers}
    assert len(answers) > 15 and not any(repaired.values())
    assert "messages.request.max_tokens_required" in found["messages-max-tokens-defaulted"].repaired


# The faults in no row: the variants are no defect (straight they fail only INFO-level checks, so a row could show only
# what LiteLLM introduces, which the [stream_fuzz] section tells of legal but unusual streams, where a drip, gzip and
# a close-delimited body are features); LiteLLM does not serve LM Studio's native /api/v1/chat; the generated faults
# show only to generated requests, which the gate does not send: every row would be empty; the Responses API's
# WebSocket mode is not played through the gate, which relays HTTP. A stream reset in the middle
# is not gated either, nor a Content-Length past the body and then a close: whether LiteLLM has forwarded part of the
# answer when the close reaches it depends on the timing of its reads, so their rows differ from run to run.
NOT_GATED_APIS_AND_MODULES = {"native_chat", "generated", "websocket"}
TIMING_DEPENDENT = {"connection-reset", "content-length-long"}
# A prefill of a few seconds kept alive by comments fails its check only under an idle limit lowered below it (the
# catalogue's); the gate holds streams to Codex's own, 300 s, where the row would be empty however LiteLLM forwards it.
IDLE_LIMIT_LOWERED = {"prefill-comment-keepalives"}
# Faults added since the file's rows were last written from LiteLLM (LMCONFORM_WRITE_GATE=1, with LiteLLM installed):
# the gate plays them once they leave this set and that run writes their rows.
AWAITING_A_RUN: set[str] = set()


def gated(fault: str) -> bool:
    """Whether the gate plays `fault`: a defect, of a gated API and kind of module
    (lmconform/apis/<api>/reference/faults/<kind>)."""
    api, kind = FAULTS[fault].module.split(".")[2], FAULTS[fault].module.rsplit(".", 1)[-1]
    return (fault in GATE_FAULTS and fault not in TIMING_DEPENDENT | IDLE_LIMIT_LOWERED | AWAITING_A_RUN
            and not FAULTS[fault].variant
            and not FAULTS[fault].generated_only and not {api, kind} & NOT_GATED_APIS_AND_MODULES)


GATED = [fault for fault in FAULTS if gated(fault)]


def test_the_gate_covers_every_fault_of_its_modules_but_those_that_only_test_a_clients_limits():
    assert [row.fault for row in load_gate_file(GATE_FILE).rows] == GATED
    assert set(FAULTS) - set(GATE_FAULTS) == {"stall", "body-too-large", "model-loading-once"}


# The command line, with the clean reference server standing in for a proxy: it repairs every defect. In
# `make check` it plays the sample of cases tests/budget.py picks and those where the faults named here show.
GATE_CASES = budget.case_options(*(case for fault in ("no-done", "role-missing", "messages-no-message-stop")
                                   for case in budget.shown_by(fault)))


def gate_command(server: ReferenceServer, *options: str) -> list[str]:
    return ["gate", "--proxy", server.base_url, "--upstream", server.base_url, "--model", UPSTREAM_MODEL,
            "--model-template", "m+{fault}", *GATE_CASES, *options]


def test_the_gate_command_prints_and_writes_the_rows(server, tmp_path, capsys):
    markdown = tmp_path / "gate.md"
    status = main(gate_command(server, "--fault", "no-done", "--fault", "role-missing", "--markdown", str(markdown)))
    assert status == 0
    assert "| `no-done` | `sse.framing.ends_with_done` | - | - | - |" in capsys.readouterr().out
    assert markdown.read_text().splitlines()[3].startswith("| `role-missing` | `chat.stream.role.assistant_first`")


def test_the_gate_command_fails_on_a_difference_from_the_expected_rows(server, tmp_path, capsys):
    expect = tmp_path / "gate.toml"
    expect.write_text('[[fault]]\nname = "no-done"\npassed_through = ["sse.framing.ends_with_done"]\n')
    assert main(gate_command(server, "--fault", "no-done", "--expect", str(expect))) == 1
    assert "no-done: repaired also sse.framing.ends_with_done" in capsys.readouterr().err


def test_the_gate_command_writes_the_rows_it_found_with_the_reasons_it_was_given(server, tmp_path):
    expect, written = tmp_path / "gate.toml", tmp_path / "found.toml"
    expect.write_text('[[fault]]\nname = "no-done"\nrepaired = ["sse.framing.ends_with_done"]\nreason = "it ends it"\n')
    options = ("--fault", "no-done", "--fault", "role-missing", "--expect", str(expect), "--write-expect", str(written))
    assert main(gate_command(server, *options)) == 1  # role-missing is not in the expected rows
    rows = load_gate_file(written).rows
    assert [(row.fault, row.repaired, row.passed_through) for row in rows] == [
        ("no-done", {"sse.framing.ends_with_done"}, set()),
        ("role-missing", {"chat.stream.role.assistant_first"}, set())]
    assert rows[0].reason == "it ends it" and rows[1].reason.startswith("what the proxy does: | `role-missing` |")


def test_without_expected_rows_the_gate_fails_on_a_failure_the_proxy_introduced(server, capsys):
    """A gate's exit status is its verdict: with no rows to compare with, what the proxy repairs or passes through
    is the upstream's, and what it introduces is its own doing, so that fails the gate."""
    with running_app(routing_app(server.base_url, "m"), "routing") as proxy:
        options = ["gate", "--proxy", proxy, "--upstream", server.base_url, "--model", "m", "--model-template",
                   "m+{fault}", *GATE_CASES, "--fault"]
        assert main([*options, "role-missing"]) == 0
        assert main([*options, "no-done"]) == 1
    err = capsys.readouterr().err
    assert "differences made by the proxy (no --expect: every one is its doing)" in err
    [line] = [line for line in err.splitlines() if line.startswith("no-done: introduced ")]
    # Each check with what the proxy answered on the first case it failed: the 502 this proxy makes of a stream
    # without `[DONE]`.
    assert re.search(r"[ ,]http\.status\.success_for_valid_request \(chat/[a-z0-9-]+: HTTP 502[):]", line), line


def test_a_proxy_run_narrowed_to_the_cases_a_fault_failed_straight_gives_the_same_rows(server):
    """The narrowing lmconform's own LiteLLM gate makes: the rows are those of the proxy playing every case given,
    what the proxy introduces included (this one answers a stream without `[DONE]` with a 502). On a case where the
    fault shows nothing (a request without a stream) the proxy has nothing to play, and its clean run stands for it."""
    shown = frozenset({"chat/non-stream-text", "chat/include-usage", "chat/forced-enum-tool-stream"})

    def cases_of(fault: str) -> frozenset[str]:
        return shown

    # Those cases and two the faults' runs leave to the clean runs, rather than all of chat's twice over.
    played = (*sorted(shown), "chat/text-stream", "chat/void-weather-tool")
    faults = ["no-done", "role-missing", "tool-index-one"]
    with running_app(routing_app(server.base_url, "m"), "routing") as proxy:
        targets = GateTargets(proxy, server.base_url, "m", "m+{fault}")
        every_case, narrowed = (run_gate(faults, targets, cases_of=cases_of, proxied_where_it_fails=narrow,
                                         cases=played) for narrow in (False, True))
    assert every_case == narrowed
    assert {row.fault: row.introduced for row in narrowed}["no-done"] >= {"http.status.success_for_valid_request"}
    where_nothing_shows = run_gate(["role-missing"], GateTargets(server.base_url, server.base_url, "m", "m+{fault}"),
                                   cases_of=lambda fault: frozenset({"chat/non-stream-text"}),
                                   proxied_where_it_fails=True)
    assert where_nothing_shows == [gate_row("role-missing", frozenset(), frozenset(), frozenset())]


def test_a_faults_cases_go_through_the_proxy_a_few_at_a_time_and_give_the_row_of_one_run(server):
    """A proxy that waits seconds on each answer it cannot read kept one thread minutes with a fault's cases in one
    run: those the fault failed straight go through it PROXIED_RUN_CASES at a time, each once, and the row is the one
    a single run of them all gives."""
    through_the_proxy = []

    def recorded(target, apis, **options):
        if target.model == "m+bad-gateway-html":
            through_the_proxy.append(options["cases"])
        return run_suite(target, apis, **options)

    with running_app(routing_app(server.base_url, "m"), "routing") as proxy, pytest.MonkeyPatch.context() as patch:
        patch.setattr("lmconform.gate.run_suite", recorded)
        targets = GateTargets(proxy, server.base_url, "m", "m+{fault}")
        (whole,) = run_gate(["bad-gateway-html"], targets, cases=("chat/*",))
        assert len(through_the_proxy) == 1  # every case of chat, in one run
        through_the_proxy.clear()
        (chunked,) = run_gate(["bad-gateway-html"], targets, cases=("chat/*",), proxied_where_it_fails=True)
    played = [case for chunk in through_the_proxy for case in chunk]
    assert len(through_the_proxy) > 2 and all(len(chunk) <= PROXIED_RUN_CASES for chunk in through_the_proxy)
    assert len(played) == len(set(played))
    assert chunked == whole and chunked.passed_through and not chunked.repaired


def test_the_gate_command_sends_an_apis_cases_through_its_own_clean_route(server, capsys):
    status = main(gate_command(server, "--clean-model", "messages=m-anthropic", "--fault", "messages-no-message-stop"))
    assert status == 0
    assert "| `messages-no-message-stop` | `messages.stream.lifecycle` | - | - | - |" in capsys.readouterr().out
    targets = GateTargets("http://127.0.0.1:4000", server.base_url, "m", "m+{fault}",
                          clean_models={"messages": "m-anthropic"})
    assert targets.proxied(None, ("messages",)).model == "m-anthropic"
    assert targets.proxied(None, ("chat",)).model == targets.proxied().model == "m"
    assert targets.proxied("no-done", ("chat",)).model == "m+no-done"
    assert targets.straight("no-done").base_url == f"{server.base_url}/faults/no-done"


@pytest.mark.parametrize("options, status, message", [
    (["--fault", "no-such-fault"], 2, "no fault is called no-such-fault"),
    (["--cases", "void-weather"], 2, "no case matches 'void-weather'"),
    (["--clean-model", "anthropic=m"], 2, "--clean-model takes API=NAME"),
    (["--model-template", "fixed-name"], 2, "--model-template must contain {fault}"),
    (["--proxy", "localhost:4000"], 2, "--proxy must be an http(s) URL"),
    (["--proxy", "http://127.0.0.1:9", "--api-key", "sk-canary-gate"], 3, "the proxy at http://127.0.0.1:9 cannot"),
])
def test_the_gate_command_refuses_bad_options_and_an_unreachable_proxy(server, capsys, options, status, message):
    assert main(gate_command(server, *options)) == status
    err = capsys.readouterr().err
    assert message in err and "sk-canary-gate" not in err


def test_cases_narrows_every_run_of_the_gate_to_the_cases_it_names(server):
    played = []

    def recorded(target, apis, **options):
        played.append(options["cases"])
        return run_suite(target, apis, **options)

    targets = GateTargets(server.base_url, server.base_url, "m", "m+{fault}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("lmconform.gate.run_suite", recorded)
        (row,) = run_gate(["role-missing"], targets, cases=("text-stream", "responses/*"))
        assert row.repaired == {"chat.stream.role.assistant_first"}
        assert set(played) == {("chat/text-stream",)}  # the fault's API's case of the two globs, in all four runs
        played.clear()
        run_gate(["role-missing"], targets, cases=("chat/text-*",),
                 cases_of=lambda fault: frozenset({"chat/text-stream", "chat/non-stream-text"}))
        assert set(played) == {("chat/text-stream",)}  # where the fault shows, of those the globs name


def test_a_row_sorts_each_check_by_where_it_fails():
    row = gate_row("f", straight=frozenset({"a", "b", "e"}), proxied=frozenset({"b", "c", "d", "e"}),
                   proxied_clean=frozenset({"d", "e"}))
    assert (row.repaired, row.passed_through, row.introduced, row.proxy_fails_anyway) == ({"a"}, {"b"}, {"c"}, {"e"})


def test_a_check_the_clean_upstream_fails_too_is_in_no_row():
    row = gate_row("f", straight=frozenset({"a", "u"}), proxied=frozenset({"c"}), proxied_clean=frozenset(),
                   straight_clean=frozenset({"u", "c"}))
    assert (row.repaired, row.passed_through, row.introduced, row.proxy_fails_anyway) == ({"a"}, set(), set(), set())


def test_a_known_limit_of_the_clean_upstream_hides_no_check_from_a_faults_row(server):
    """An upstream in LM Studio's dialect refuses Codex's recorded requests for their tool types, a known limit of
    that dialect: that refusal is no finding of http.status.success_for_valid_request (nor of the reasoning Codex
    replays), which a fault refusing a valid request in its own words still shows."""
    targets = GateTargets(server.base_url, f"{server.base_url}/faults/responses-function-tools-only", "m", "m+{fault}")
    (row,) = run_gate(["flattened-tools-rejected"], targets,
                      cases=("responses/calculate-tool-flattened", "responses/recorded-codex-*"))
    assert row.repaired == {"http.status.success_for_valid_request", "generation.reasoning.round_trip_accepted"}


def test_differences_name_the_fault_and_the_checks_both_ways():
    nothing = frozenset()
    expected = [GateRow("no-done", frozenset({"sse.framing.ends_with_done"}), nothing, nothing, nothing)]
    found = [GateRow("no-done", nothing, frozenset({"sse.framing.ends_with_done"}), nothing, nothing),
             GateRow("role-missing", nothing, nothing, nothing, nothing)]
    assert gate_differences(found, expected) == [
        "no-done: repaired; not sse.framing.ends_with_done",
        "no-done: passed through also sse.framing.ends_with_done",
        "role-missing: not in the expected rows",
    ]


def test_a_difference_says_what_the_proxy_answered_for_each_check_it_failed():
    row = gate_row("no-done", straight={"sse.framing.ends_with_done"},
                   proxied={"http.status.success_for_valid_request": "chat/basic-stream: HTTP 429"}, proxied_clean=())
    assert gate_differences([row], [gate_row("no-done", straight={"sse.framing.ends_with_done"}, proxied=(),
                                             proxied_clean=())]) == [
        "no-done: introduced also http.status.success_for_valid_request (chat/basic-stream: HTTP 429)"]


def test_a_row_that_differs_is_played_again_and_counts_as_its_second_play(capsys):
    """The LiteLLM gate's second opinion: a difference seen once is LiteLLM's race and is printed; one seen in both
    plays stays, and fails the comparison."""
    nothing, ended = frozenset(), frozenset({"sse.framing.ends_with_done"})
    expected = (GateRow("no-done", ended, nothing, nothing, nothing), GateRow("role-missing", nothing, nothing,
                                                                              nothing, nothing))
    first = {"no-done": replace(expected[0], introduced=frozenset({"http.status.success_for_valid_request"})),
             "role-missing": replace(expected[1], passed_through=ended)}
    second = [expected[0], first["role-missing"]]
    asked = []
    found = replayed_where_they_differ(dict(first), expected, lambda faults: asked.append(faults) or second)
    assert asked == [["no-done", "role-missing"]]
    assert found == {"no-done": expected[0], "role-missing": first["role-missing"]}
    assert "no-done: the first play differed, the second matched: no-done: introduced also" in capsys.readouterr().out
    assert replayed_where_they_differ(dict(found), (expected[0], first["role-missing"]), asked.append) == found
    assert len(asked) == 1


def test_a_check_that_varies_is_compared_nowhere_and_written_back_with_its_row(tmp_path):
    nothing, racing = frozenset(), frozenset({"chat.tool_choice.object_form_answered"})
    expected = GateRow("content-length-short", nothing, nothing, frozenset({"http.status.success_for_valid_request"}),
                       nothing, reason="why", varies=racing)
    seen_both_ways = [replace(expected, introduced=expected.introduced | racing), expected]
    assert all(gate_differences([row], [expected]) == [] for row in seen_both_ways)
    other = replace(expected, introduced=frozenset({"sse.framing.well_formed"}))
    assert gate_differences([other], [expected]) == [
        "content-length-short: introduced also sse.framing.well_formed; not http.status.success_for_valid_request"]
    path = tmp_path / "gate.toml"
    path.write_text(gate_toml([seen_both_ways[0]], {expected.fault: "why"}, {expected.fault: racing}))
    (read,) = load_gate_file(path).rows
    assert read.varies == racing and gate_differences(seen_both_ways, [read]) == []
    path.write_text('[[fault]]\nname = "no-done"\nvaries = ["sse.framing.no_such_check"]\n')
    with pytest.raises(ExpectationError, match="no check is called sse.framing.no_such_check"):
        load_gate_file(path)


@pytest.mark.parametrize("text, message", [
    ('[[fault]]\nname = "no-such-fault"\n', "no fault is called 'no-such-fault'"),
    ('[[fault]]\nname = "no-done"\nrepaired = ["sse.framing.no_such_check"]\n', "no check is called"),
    ('[[fault]]\nname = "no-done"\nfixed = []\n', "has fixed"),
])
def test_a_gate_file_with_a_typo_is_refused(tmp_path, text, message):
    path = tmp_path / "gate.toml"
    path.write_text(text)
    with pytest.raises(ExpectationError, match=message):
        load_gate_file(path)


# --- legal but unusual streams through LiteLLM (lmconform.run.transparency) -------------------------------------------


@pytest.fixture(scope="module")
def stream_fuzz(server: ReferenceServer):
    expected = load_expected(GATE_FILE)

    def play(proxy):
        return fuzz_streams(Target(proxy.base_url, api_key=proxy.api_key, model=UPSTREAM_MODEL),
                            Target(server.base_url, model=UPSTREAM_MODEL), expected.examples, expected.seed)

    return expected, played_through_litellm(play, server, label="litellm-stream-fuzz")


@pytest.mark.real_server
def test_what_litellm_does_with_legal_but_unusual_streams_is_exactly_the_expected(stream_fuzz):
    expected, found = stream_fuzz
    print(stream_table(found))
    if os.environ.get(WRITE_GATE):
        reasons = {row.key: row.reason for row in expected.rows}
        rows = tuple(replace(row, reason=reasons.get(row.key, "")) for row in found.rows)
        rewrite_gate_file(stream_fuzz=stream_toml(replace(found, rows=rows)))
        return
    differences = stream_differences(found, expected)
    assert not differences, f"{GATE_FILE.name} [stream_fuzz]:\n" + "\n".join(differences) + "\n\n" + stream_table(found)
    assert found.played == expected.examples


def test_every_expected_row_says_why():
    rows = [*load_gate_file(GATE_FILE).rows, *load_expected(GATE_FILE).rows]
    assert [row for row in rows if not row.reason or row.reason.startswith("what the proxy does:")] == []
