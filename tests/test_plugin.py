"""The suite as users run it: `pytest suites ...` in a subprocess, judged by exit status, output and files."""

import json
import re
import socket
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import budget
import processes
import pytest
from bridge_pipe import closed_port
from pages import unpacked

ROOT = Path(__file__).resolve().parent.parent
CANARY_KEY = "sk-canary-4f1d2e9b7c"


def run_suite(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return processes.run(budget.suite_command("-q", *args), cwd=ROOT, timeout=300, env=env)


def suite_in_this_process(capsys: pytest.CaptureFixture, *args: str,
                          suites: Path = ROOT / "suites") -> tuple[int, str]:
    """`pytest suites ARGS` in this process, for what ends before a case is played (a usage error, a collection, a
    target that does not answer): its exit status and what it wrote. A process of its own would spend a second
    starting Python and pytest's plugins to say one line; the tests above and below run the suite as users do, in
    one."""
    status = pytest.main([str(suites), "-p", "no:cacheprovider", *args])
    written = capsys.readouterr()
    return int(status), written.out + written.err


def test_the_embedded_reference_server_passes_and_the_results_record_is_written(tmp_path):
    results = tmp_path / "results.json"
    finished = run_suite("--results-json", str(results), *budget.suite_options())
    assert finished.returncode == 0, finished.stdout[-2000:]
    record = json.loads(results.read_text())
    assert record["target"]["label"] == "reference" and record["target"]["model"] == "lmconform-reference"
    assert record["results"] and {row["outcome"] for row in record["results"] if "expected" not in row} == {"OK"}
    # What it does not pass is a known limit of LM Studio's dialect, which the package expects of it: Codex's tools.
    assert all(row["expected"]["file"].startswith("lmconform/verdicts/causes.toml#") for row in record["results"]
               if row["outcome"] != "OK")
    assert set(record["results"][0]) >= {"case", "check", "level", "outcome", "message", "evidence"}
    assert set(record["curls"]) == {row["case"] for row in record["results"]}  # each case's curl, once
    assert "verdicts:" in finished.stdout


def test_a_must_failure_exits_1_with_the_check_id_first_in_the_junit_message(server, tmp_path):
    junit = tmp_path / "junit.xml"
    finished = run_suite("--endpoint", f"{server.base_url}/faults/tool-index-one/v1", "--checks", "chat.stream.*",
                         "--junitxml", str(junit), *budget.case_options(*budget.shown_by("tool-index-one")))
    assert finished.returncode == 1
    failures = [f.get("message") for f in ElementTree.parse(junit).iter("failure")]
    assert failures and all(message.startswith("[chat.stream.tool_call.index_zero] ") for message in failures)
    assert "Expected: the next call at index 0" in finished.stdout and "Actual:   index 1" in finished.stdout
    assert "curl -sS -N -X POST" in finished.stdout


def test_should_findings_fail_only_with_strict(server):
    options = ("--endpoint", f"{server.base_url}/faults/chunk-id-changes", "--checks", "chat.stream.chunk.*",
               *budget.case_options(*budget.shown_by("chunk-id-changes")))
    relaxed = run_suite(*options)
    assert relaxed.returncode == 0 and "NON-STRICT" in relaxed.stdout
    strict = run_suite(*options, "--strict")
    assert strict.returncode == 1 and "[chat.stream.chunk.id_stable]" in strict.stdout


def test_the_corrupted_name_of_a_repeated_name_is_shown_by_both_clients(server):
    finished = run_suite("--endpoint", f"{server.base_url}/faults/id-name-repeated", "--checks", "client.*", "-rf",
                         *budget.case_options("chat/void-weather-tool"))
    assert finished.returncode == 1
    assert "Void reads 'get_weatherget_weather" in finished.stdout
    assert "the SDK shows 'get_weatherget_weather" in finished.stdout


def test_type_null_continuation_breaks_the_openai_sdk(server):
    finished = run_suite("--endpoint", f"{server.base_url}/faults/type-null-continuation",
                         "--checks", "client.openai_python.*",
                         *budget.case_options(*budget.shown_by("type-null-continuation")))
    assert finished.returncode == 1 and "it raises AssertionError" in finished.stdout


def test_an_unreachable_target_prints_one_line_and_exits_3(capsys):
    status, output = suite_in_this_process(capsys, "--endpoint", f"http://127.0.0.1:{closed_port()}")
    assert status == 3
    assert "Traceback" not in output
    assert "cannot connect to http://127.0.0.1:" in output and "Is the server running?" in output


def test_a_target_that_accepts_and_never_answers_exits_3_at_once(capsys):
    """Every case waited the read timeout and ended in ERROR, one after the other: hours at the default timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)  # the kernel accepts the connections; nothing ever reads or answers them
        status, output = suite_in_this_process(capsys, "--endpoint", f"http://127.0.0.1:{listener.getsockname()[1]}",
                                               "--read-timeout", "1")
    assert status == 3
    assert "Traceback" not in output and "passed" not in output and "failed" not in output
    assert "accepted the connection but did not answer GET /v1/models (no bytes for 1 s (read timeout)" in output


def test_a_stalled_stream_ends_its_case_with_error_not_a_hang(server, tmp_path):
    results = tmp_path / "results.json"
    finished = run_suite("--endpoint", f"{server.base_url}/faults/stall", "--timeout", "1", "-k", "void-weather-tool",
                         "--checks", "sse.framing.ends_with_done", "--results-json", str(results))
    assert finished.returncode == 1
    rows = json.loads(results.read_text())["results"]
    assert rows and {row["outcome"] for row in rows} == {"ERROR"}
    assert "read timeout" in rows[0]["message"]


def test_an_endless_body_is_cut_off_at_the_default_cap_with_a_finding(server, tmp_path):
    results = tmp_path / "results.json"
    finished = run_suite("--endpoint", f"{server.base_url}/faults/body-too-large", "-k", "void-weather-tool",
                         "--checks", "http.body.*", "--checks", "sse.framing.data_is_json", "--results-json", str(results))
    assert finished.returncode == 1
    outcomes = {(row["check"], row["outcome"]) for row in json.loads(results.read_text())["results"]}
    assert ("http.body.within_size_cap", "FAILED") in outcomes
    assert ("sse.framing.data_is_json", "ERROR") in outcomes
    assert "more than 33554432 bytes" in finished.stdout


@pytest.mark.parametrize(
    "args, complaint",
    [
        (["--endpoint", "localhost:1234"], "must be an http(s) URL, not 'localhost:1234': did you mean http://localhost:1234?"),
        (["--endpoint", "ftp://localhost"], "must be an http(s) URL, not 'ftp://localhost': give one such as http://"),
        (["--timeout", "soon"], "--read-timeout takes a number above 0 and at most 86400, not 'soon'"),
        (["--read-timeout", "inf"], "--read-timeout takes a number above 0 and at most 86400, not 'inf'"),
        (["--temperature", "nan"], "--temperature takes a number from 0 to 2, not 'nan'"),
        (["--stream-idle-limit", "-1"], "--stream-idle-limit takes a number above 0 and at most 86400, not '-1'"),
        (["--fuzz-examples", "-1"], "--fuzz-examples takes a whole number of at least 0, not '-1'"),
        (["--checks", "chat.nothing.like_this"], "no check id matches"),
        (["--cases", "void-weather"], "no case matches 'void-weather'"),
        (["--reference-fault", "no-such-fault"], "unknown fault 'no-such-fault'"),
        (["--agents", "claude,cursor"], "--agents takes agents among claude-code, codex, opencode"),
        (["--agents", "claude-code@2.1"], "'claude-code@2.1' names no version: after @ comes an exact version"),
        (["--agents", "all", "--agent-requests", "0"], "--agent-requests takes a whole number of at least 1, not '0'"),
    ],
)
def test_a_bad_option_is_a_usage_error_with_exit_2(capsys, args, complaint):
    status, output = suite_in_this_process(capsys, *args)
    assert status == 2
    assert complaint in output and "Traceback" not in output


def test_an_agent_asked_for_and_not_installed_is_a_usage_error_saying_how_to_install_it(capsys, monkeypatch, tmp_path):
    # A gate that asks for Claude Code must not go green without running it.
    monkeypatch.setenv("LMCONFORM_AGENTS_CACHE", str(tmp_path / "no-agents"))
    status, output = suite_in_this_process(capsys, "--agents", "claude-code")
    assert status == 2 and "Traceback" not in output
    assert "--agents claude-code: Claude Code is not installed: `lmconform agents install` installs it" in output


def test_a_file_that_cannot_be_written_is_one_line_and_exit_2_the_verdicts_kept(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    finished = run_suite("-k", "test_models", "--results-json", str(blocked / "results.json"),
                         "--report", str(blocked / "report.html"))
    assert finished.returncode == 2
    output = finished.stdout + finished.stderr
    assert "Traceback" not in output and "passed" in output
    assert f"lmconform: cannot write {blocked / 'report.html'}: File exists ({blocked})" in output
    assert f"lmconform: cannot write {blocked / 'results.json'}: File exists ({blocked})" in output


def test_the_api_key_never_appears_in_output_or_results(server, tmp_path):
    results = tmp_path / "results.json"
    env = {**__import__("os").environ, "LMCONFORM_API_KEY": CANARY_KEY}
    finished = run_suite("--endpoint", f"{server.base_url}/faults/tool-index-one", "--checks", "chat.stream.*",
                         "--results-json", str(results), *budget.case_options(*budget.shown_by("tool-index-one")),
                         env=env)
    assert finished.returncode == 1 and "Bearer [Filtered]" in finished.stdout
    assert CANARY_KEY not in finished.stdout + finished.stderr + results.read_text()


def test_the_embedded_server_reproduces_a_fault_on_request(tmp_path):
    finished = run_suite("--reference-fault", "empty-response", "--checks", "generation.answer.not_empty",
                         *budget.case_options(*budget.shown_by("empty-response")))
    assert finished.returncode == 1 and "[generation.answer.not_empty]" in finished.stdout


def test_differential_mode_reports_a_proxy_that_changes_the_generation(server, tmp_path):
    results = tmp_path / "results.json"
    finished = run_suite("--endpoint", f"{server.base_url}/faults/finish-stop-after-tools", "--upstream",
                         server.base_url, "--checks", "proxy.*", "--results-json", str(results),
                         *budget.case_options(*budget.shown_by("finish-stop-after-tools")))
    assert finished.returncode == 1
    assert '[proxy.diff.generation_preserved]' in finished.stdout
    assert 'Expected: finish: "tool_calls" (upstream)' in finished.stdout
    quiet = run_suite("--endpoint", server.base_url, "--upstream", server.base_url, "--checks", "proxy.*",
                      *budget.case_options())
    assert quiet.returncode == 0


def test_differential_checks_run_only_with_an_upstream(capsys):
    status, output = suite_in_this_process(capsys, "--checks", "proxy.*", "--collect-only", "-q")
    assert status == 0 and "proxy.diff" not in output
    _, with_upstream = suite_in_this_process(capsys, "--checks", "proxy.*", "--collect-only", "-q", "--upstream",
                                             "http://127.0.0.1:9")
    assert "proxy.diff.status_preserved" in with_upstream


def test_selected_checks_never_change_what_is_sent(server):
    """Checks only read: a run that keeps some checks sends, for the cases it keeps, exactly what a full run sends
    (the request, every turn, every generated example)."""
    from lmconform.run import run_suite
    from lmconform.target import Target

    def sent(run) -> dict[str, list]:
        requests = {}
        for case_id, examples in run._examples.items():
            requests[case_id] = [(exchange.request.method, exchange.request.url, exchange.request.body)
                                 for observed in examples
                                 for exchange in [observed.exchange,
                                                  *(turn.exchange for turn in observed.turns.values() if turn.exchange)]]
        return requests

    target, settings = Target(base_url=server.base_url, profile="reference"), budget.suite_settings()
    some = sent(run_suite(target, include=["responses.chain.*"], settings=settings))
    everything = sent(run_suite(target, settings=settings, cases=tuple(some)))
    assert {"responses/fuzz-chains", "responses/paris-population-chain"} <= set(some)

    def without_ids(requests):  # response and call ids are minted anew by each run; what refers to them is the same
        def scrub_url(url):  # GET and DELETE /v1/responses/{id} name the stored answer in the path
            return re.sub(r"/resp_[0-9A-Za-z]+", "/<id>", url)

        def scrub(value):
            if isinstance(value, dict):
                return {key: "<id>" if key in ("previous_response_id", "call_id") else scrub(item)
                        for key, item in value.items()}
            return [scrub(item) for item in value] if isinstance(value, list) else value
        return [(method, scrub_url(url), scrub(body)) for method, url, body in requests]

    for case_id, requests in some.items():
        assert without_ids(requests) == without_ids(everything[case_id]), case_id


def test_cases_names_a_case_by_id_or_name_and_a_name_is_not_a_prefix():
    from lmconform.run import RunPlan
    from lmconform.target import Target

    def played(plan: RunPlan, api: str) -> set[str]:
        return {case.id for case, _ in plan.pairs(api)}

    target = Target("http://127.0.0.1:9")
    named = RunPlan(target, cases=("max-tokens-cut", "responses/*"))
    assert played(named, "chat") == {"chat/max-tokens-cut"}  # not chat/max-tokens-cut-stream
    assert played(named, "responses") == played(RunPlan(target), "responses") and played(named, "messages") == set()
    assert played(RunPlan(target, cases=()), "chat") == set()  # naming no case plays none (the gate's narrowed runs)
    assert played(RunPlan(target, cases=("chat/*",), exclude_cases=("*-stream",)), "chat") == {
        case.id for case, _ in RunPlan(target).pairs("chat") if not case.id.endswith("-stream")}


@pytest.mark.parametrize("fault", [None, "tool-index-one", "chain-ignored"], ids=str)
def test_the_plugin_and_the_runner_give_the_same_verdicts(server, tmp_path, fault):
    """One run builder: `pytest suites` and lmconform.run.run_suite judge the same pairs the same way. With a fault,
    the pairs of the APIs it leaves alone are the clean server's, which the run without one judges whole: `make test`
    plays the cases of the fault's APIs."""
    from lmconform.gate import CASES_FOR_FAULT_API
    from lmconform.reference.faults import FAULTS
    from lmconform.run import run_suite as run_in_process
    from lmconform.target import Target

    endpoint = server.base_url + (f"/faults/{fault}" if fault else "")
    shown = budget.shown_by(fault) if fault else ()
    cases = budget.suite_cases(*shown) or (
        tuple(f"{api}/*" for api in CASES_FOR_FAULT_API[FAULTS[fault].api]) if fault else None)
    results = tmp_path / "results.json"
    chosen = [*(option for glob in budget.suite_checks() for option in ("--checks", glob)),
              *(option for case in cases or () for option in ("--cases", case))]
    run_suite("--endpoint", endpoint, "--profile", "reference", "--results-json", str(results), *chosen)

    def rows(records):
        return sorted((row["case"], row["check"], row["level"], row["outcome"], row["message"].splitlines()[0])
                      for row in records)

    by_plugin = rows(json.loads(results.read_text())["results"])
    by_runner = rows(verdict.record() for verdict in run_in_process(Target(endpoint, profile="reference"),
                                                                     include=budget.suite_checks(),
                                                                     settings=budget.suite_settings(),
                                                                     cases=cases).verdicts)
    assert by_plugin and by_plugin == by_runner
    if fault and not budget.CHECK:
        assert {row[0].split("/")[0] for row in by_plugin} == set(CASES_FOR_FAULT_API[FAULTS[fault].api])


# What legitimately differs between two runs of the same verdicts: each embedded server's port, the times in its
# answers (`created`, the Date header), the run's start and when each answer arrived (the timing section).
RUN_SPECIFIC = [(re.compile(r'<section class="lmc-timing".*?</section>', re.DOTALL), "TIMING"),
                (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
                (re.compile(r"(&quot;|\")created(&quot;|\"):\s?\d+"), "created: TIME"),
                (re.compile(r"^date: .*$", re.MULTILINE), "date: TIME"),
                (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "STARTED")]


def without_run_specifics(text: str) -> str:
    for pattern, replacement in RUN_SPECIFIC:
        text = pattern.sub(replacement, text)
    return text


def test_several_processes_give_the_record_and_the_page_of_one(tmp_path):
    """pytest-xdist: each worker runs its own embedded reference server and plays the cases it is given; the
    controlling process writes one results record, with the exchanges behind the findings whichever worker found
    them, and one JUnit file. The page `lmconform report` builds from that record is the serial run's page, byte for
    byte once what differs between any two runs is masked."""
    fault = ("--reference-fault", "id-name-repeated", *budget.suite_options(
        "chat.stream.*", cases=("chat/void-weather-tool", *budget.shown_by("id-name-repeated"))))
    serial, parallel = tmp_path / "serial.json", tmp_path / "parallel.json"
    junit = tmp_path / "junit.xml"
    assert run_suite(*fault, "--results-json", str(serial), "--report", str(tmp_path / "serial.html")).returncode == 1
    finished = run_suite(*fault, *processes.workers(2), "--results-json", str(parallel), "--junitxml", str(junit))
    assert finished.returncode == 1, finished.stdout[-2000:]
    assert "verdicts:" in finished.stdout
    built = processes.run([sys.executable, "-m", "lmconform.cli", "report", str(parallel), "-o",
                           str(tmp_path / "parallel.html")], timeout=300)
    assert built.returncode == 0, built.stderr

    def rows(path):
        record = json.loads(path.read_text())
        assert record["target"]["label"] == "reference"
        return [(row["case"], row["check"], row["level"], row["outcome"], row["message"].splitlines()[0])
                for row in record["results"]]

    assert rows(parallel) == rows(serial)
    timings = [json.loads(path.read_text())["timing"] for path in (serial, parallel)]
    assert timings[0] and set(timings[1]) == set(timings[0])  # each case's figures, whichever worker played it
    assert all(figures["first_byte_s"] >= 0 for figures in timings[1].values())
    assert len(list(ElementTree.parse(junit).iter("testcase"))) >= len(rows(serial))
    exchanges = json.loads(parallel.read_text())["exchanges"]
    assert "chat/void-weather-tool" in exchanges and "HTTP 200" in exchanges["chat/void-weather-tool"]
    pages = [without_run_specifics(unpacked((tmp_path / name).read_text(encoding="utf-8")))
             for name in ("serial.html", "parallel.html")]
    assert 'id="exchange-chat-void-weather-tool"' in pages[1]
    assert pages[1] == pages[0]


def test_an_unreachable_target_with_several_processes_exits_3_before_any_worker_starts():
    finished = run_suite("-n", "2", "--endpoint", f"http://127.0.0.1:{closed_port()}")
    assert finished.returncode == 3
    assert "Is the server running?" in finished.stdout + finished.stderr
    assert "Traceback" not in finished.stdout + finished.stderr


def test_the_plugin_wakes_only_for_a_command_line_that_names_the_suites(tmp_path, capsys):
    from lmconform.pytest_entry import names_the_suites

    assert names_the_suites(["suites"]) and names_the_suites([str(ROOT / "suites"), "-q"])
    assert names_the_suites(["-k", "chat", f"{ROOT / 'suites' / 'test_apis.py'}::test_chat"])
    assert names_the_suites(["--pyargs", "lmconform.suites"]) and names_the_suites(["lmconform.suites.test_apis"])
    assert not names_the_suites([]) and not names_the_suites([str(tmp_path), "-p", "no:cacheprovider"])
    assert not names_the_suites([str(ROOT / "tests"), "lmconform.suitesque", "-m", "not slow"])
    unrelated = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True,
                               cwd=tmp_path, timeout=300)
    assert unrelated.returncode == 0 and "--endpoint" not in unrelated.stdout
    assert "--endpoint" in suite_in_this_process(capsys, "--help")[1]
