"""The suite against a VS Code language-model bridge, as users run it: `pytest suites --bridge-command "CMD"` in a
subprocess, judged by its exit status, output, results record, JUnit and HTML report."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ElementTree

import bridge_pipe
import budget
import pytest
from pages import unpacked
from test_plugin import run_suite, suite_in_this_process

from lmconform.cases import load_cases
from lmconform.report.findings_html import exchange_anchor
from lmconform.report.matrix import build_matrix
from lmconform.run.plan import EMBEDDED_BRIDGE
from lmconform.verdicts.records import load_results

pytestmark = pytest.mark.waits

# `lmconform bridge`, by its entry point (the console script may not be on this PATH): the openai agent.
LMCONFORM_BRIDGE = shlex.join(bridge_pipe.LMCONFORM_BRIDGE)
ECHO_BRIDGE = shlex.join(EMBEDDED_BRIDGE)
HISTORY_CHECKS = {"vscodelm.history.commit", "vscodelm.history.discard"}


def test_lmconform_bridge_passes_clean_and_every_report_shows_the_surface(tmp_path, server):
    # In front of the reference server this process runs: a bridge process, started for each case, would start an
    # embedded one of its own (tests/test_bridge.py tests that default).
    bridge = f"{LMCONFORM_BRIDGE} --endpoint {server.base_url}"
    results, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    # In `make check`, the budget's sample of cases with those this test reads.
    read = ("vscodelm/plain-turn", "vscodelm/history-commit", "vscodelm/history-discard")
    played = budget.suite_cases(*read)
    finished = run_suite("--bridge-command", bridge, "--results-json", str(results),
                         "--junitxml", str(junit), *budget.case_options(*read))
    assert finished.returncode == 0, finished.stdout[-3000:]
    record = json.loads(results.read_text())
    assert record["target"]["url"] == f"stdio: {bridge}"
    assert record["target"]["bridge"] == {"command": bridge, "model": "lmconform-bridge",
                                          "profile": "strict"}
    rows = record["results"]
    assert {row["case"] for row in rows} == {case.id for case in load_cases("vscodelm")  # the bridge alone
                                             if played is None or case.id in played}
    # The openai agent does not say what history it was given: commit and discard are UNSUPPORTED, all else OK.
    assert {row["check"] for row in rows if row["outcome"] != "OK"} == HISTORY_CHECKS
    assert {row["outcome"] for row in rows if row["check"] in HISTORY_CHECKS} == {"UNSUPPORTED"}
    names = {case.get("name") for case in ElementTree.parse(junit).iter("testcase")}
    assert "test_vscodelm[plain-turn:vscodelm.turn.one_complete]" in names
    matrix = build_matrix(load_results([results]))
    assert "vscodelm" in [surface for surface, _ in matrix.surfaces()]
    assert f"bridge: {bridge}" in finished.stdout


@pytest.mark.slow
def test_a_bridge_fault_fails_its_check_with_the_case_replayable_and_its_transcript_reported(tmp_path):
    report = tmp_path / "report.html"
    finished = run_suite("--bridge-fault", "cancel-ignored", "-k", "vscodelm", "--checks", "vscodelm.cancel.*",
                         "--report", str(report))
    assert finished.returncode == 1, finished.stdout[-3000:]
    assert "[vscodelm.cancel.no_more_parts] after lm/cancel, no part of the request comes later than 1 s" \
        in finished.stdout
    assert "Reproduce: { printf '%s\\n' " in finished.stdout and "sleep " in finished.stdout
    page = unpacked(report.read_text())  # the whole conversation with the process, in the exchanges findings link to
    assert f'<details id="{exchange_anchor("vscodelm/cancel-while-streaming")}">' in page
    assert "--profile strict --fault cancel-ignored" in page and "lm/provideLanguageModelChatResponse" in page


@pytest.mark.slow
def test_the_symposium_profile_expects_no_complete_after_a_cancel():
    symposium = f"{ECHO_BRIDGE} --profile symposium"
    held = run_suite("--bridge-command", symposium, "--bridge-profile", "symposium", "-k", "cancel-while-streaming")
    assert held.returncode == 0, held.stdout[-3000:]
    broken = run_suite("--bridge-command", symposium, "-k", "cancel-while-streaming")
    assert broken.returncode == 1 and "[vscodelm.cancel.strict_complete]" in broken.stdout


def test_a_bridge_command_that_cannot_start_exits_3():
    finished = run_suite("--bridge-command", "/nonexistent/bridge --stdio")
    assert finished.returncode == 3
    output = finished.stdout + finished.stderr
    assert "cannot start `/nonexistent/bridge --stdio`" in output and "Traceback" not in output


@pytest.mark.parametrize(("args", "complaint"), [
    (("--bridge-profile", "relaxed"), "--bridge-profile takes one of strict, symposium"),
    (("--bridge-command", "lmconform 'bridge"), "cannot be split into words"),
    (("--bridge-command", ""), "needs a command line"),
    (("--bridge-fault", "no-such-fault"), "unknown bridge fault 'no-such-fault'"),
    (("--bridge-fault", "cancel-ignored", "--bridge-command", "lmconform bridge"), "--bridge-fault applies to"),
    (("--reference-fault", "no-done", "--bridge-command", "lmconform bridge"), "--reference-fault applies to"),
])
def test_a_bad_bridge_option_is_a_usage_error(capsys, args, complaint):
    status, output = suite_in_this_process(capsys, *args)
    assert status == 2 and complaint in output and "Traceback" not in output
