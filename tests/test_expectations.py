"""--expect: known failures gate a CI run on "no new failures", and a fixed defect is noticed."""

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import budget
import processes
import pytest

from lmconform.expectations import ExpectationError, load_expectations
from lmconform.vocabulary import Outcome
from tools.targets.rewrite import PLACEHOLDER, placeholders, rewritten

ROOT = Path(__file__).resolve().parent.parent
KNOWN = """
label = "proxy-under-test"
[[expected]]
check = "chat.stream.tool_call.index_zero"
case = "chat/*"
outcome = "FAILED"
reason = "the upstream numbers tool calls from 1"
seen = "reference server fault tool-index-one"
"""


def suite(*args: str) -> subprocess.CompletedProcess:
    return processes.run(budget.suite_command("-q", *args), cwd=ROOT, timeout=300)


def test_known_failures_pass_the_gate_and_are_recorded(server, tmp_path):
    expect, results = tmp_path / "known.toml", tmp_path / "results.json"
    expect.write_text(KNOWN)
    finished = suite("--endpoint", f"{server.base_url}/faults/tool-index-one", "--checks",
                     "chat.stream.tool_call.index_zero", "--expect", str(expect), "--results-json", str(results),
                     *budget.case_options(*budget.shown_by("tool-index-one")))
    assert finished.returncode == 0, finished.stdout[-1500:]
    assert "xfailed" in finished.stdout
    rows = json.loads(results.read_text())["results"]
    assert rows and all(row["outcome"] == "FAILED" and row["expected"]["reason"] for row in rows)


def test_a_new_failure_still_fails_the_gate(server, tmp_path):
    expect = tmp_path / "known.toml"
    expect.write_text(KNOWN)
    finished = suite("--endpoint", f"{server.base_url}/faults/tool-index-one,tool-id-missing", "--checks",
                     "chat.stream.tool_call.*", "--expect", str(expect),
                     *budget.case_options(*budget.shown_by("tool-index-one"), *budget.shown_by("tool-id-missing")))
    assert finished.returncode == 1
    assert "[chat.stream.tool_call.starts_with_id_and_name]" in finished.stdout


def test_a_known_failure_that_passes_fails_the_gate(server, tmp_path):
    expect = tmp_path / "known.toml"
    expect.write_text(KNOWN)
    finished = suite("--endpoint", server.base_url, "--checks", "chat.stream.tool_call.index_zero",
                     "--expect", str(expect), *budget.case_options(*budget.shown_by("tool-index-one")))
    assert finished.returncode == 1 and "UNEXPECTED PASS" in finished.stdout


@pytest.mark.parametrize("text, complaint", [
    ("[[expected]]\ncheck = 'x.y.z'\nreason = 'r'\n", "has no outcome"),
    ("[[expected]]\ncheck = 'x.y.z'\noutcome = 'BROKEN'\nreason = 'r'\n", "is not one of"),
    ("this is = not toml =", "not TOML"),
])
def test_a_bad_expectations_file_is_refused(tmp_path, text, complaint):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ExpectationError, match=complaint):
        load_expectations(path)


def test_a_bad_expectations_file_is_a_usage_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[[expected]]\ncheck = 'x'\n")
    finished = suite("--expect", str(path))
    assert finished.returncode == 2 and "has no outcome, reason" in finished.stdout + finished.stderr


MODEL_DEPENDENT = """
[[expected]]
check = "generation.tool_call.arguments_json_object"
case = "chat/a"
model_dependent = true
outcomes = ["OK", "FAILED"]
reason = "the model may be cut inside its arguments"
"""


def test_a_model_dependent_row_allows_each_outcome_of_its_set_and_no_other(tmp_path):
    path = tmp_path / "known.toml"
    path.write_text(MODEL_DEPENDENT)
    row = load_expectations(path).for_pair("chat/a", "generation.tool_call.arguments_json_object")
    assert row.model_dependent and row.allows("OK") and row.allows("FAILED") and not row.allows("ERROR")
    assert row.shown == "OK or FAILED (model-dependent)"


@pytest.mark.parametrize("row, complaint", [
    ('outcomes = ["OK", "FAILED"]\noutcome = "FAILED"', "names its outcomes"),
    ('outcomes = []', "names its outcomes"),
    ('outcomes = ["OK", "BROKEN"]', "'BROKEN' is not one of"),
    ('outcomes = ["OK", "FAILED", "NON-STRICT", "INFO", "UNSUPPORTED", "ERROR"]', "allows every outcome"),
])
def test_a_model_dependent_row_must_name_a_narrow_set(tmp_path, row, complaint):
    path = tmp_path / "bad.toml"
    path.write_text(f"[[expected]]\ncheck = 'x.y.z'\nmodel_dependent = true\nreason = 'r'\n{row}\n")
    with pytest.raises(ExpectationError, match=complaint):
        load_expectations(path)


def test_only_a_model_dependent_row_may_allow_several_outcomes(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[[expected]]\ncheck = 'x.y.z'\noutcome = 'FAILED'\noutcomes = ['OK', 'FAILED']\nreason = 'r'\n")
    with pytest.raises(ExpectationError, match="only a model-dependent row"):
        load_expectations(path)


# --- the real servers' files, written again by `make expected-real` -----------------------------------------------

TARGET_FILE = """\
label = "a-server"
# how it is started
start = "a-server --port P"

# wire facts
[[expected]]
check = "chat.stream.tool_call.index_zero"
case = "chat/void-weather-tool"
outcome = "FAILED"
reason = "numbers calls from 1"
seen = "a-server 1.0"

[[expected]]
check = "errors.status.client_error_for_invalid_request"
case = "chat/invalid-*"
outcome = "FAILED"
reason = "answers 500"
seen = "a-server 1.0"

# what the model decides
[[expected]]
check = "generation.tool_call.arguments_json_object"
case = "chat/void-weather-tool"
model_dependent = true
outcomes = ["OK", "FAILED"]
reason = "cut at max_tokens"
seen = "a-server 1.0"

[[expected]]
check = "chat.finish_reason.tool_calls_after_tool_call"
case = "chat/void-weather-tool"
outcome = "NON-STRICT"
reason = "no longer sent"
seen = "a-server 1.0"

[[expected]]
check = "chat.finish_reason.length_at_max_tokens"
case = "chat/void-weather-tool"
model_dependent = true
outcomes = ["OK", "NON-STRICT"]
reason = "the answer may end before the cap, which leaves the check nothing to judge"
seen = "a-server 1.0"
"""


def verdict_of(case: str, check: str, outcome: str, known_limit: bool = False):
    return SimpleNamespace(case_id=case, check=SimpleNamespace(id=check), outcome=Outcome(outcome),
                           known_limit=known_limit)


def test_a_rewritten_target_file_keeps_what_holds_and_asks_for_what_the_run_adds(tmp_path):
    path = tmp_path / "a-server.toml"
    path.write_text(TARGET_FILE)
    verdicts = [verdict_of("chat/void-weather-tool", "chat.stream.tool_call.index_zero", "FAILED"),
                verdict_of("chat/invalid-role", "errors.status.client_error_for_invalid_request", "FAILED"),
                verdict_of("chat/invalid-json", "errors.status.client_error_for_invalid_request", "NON-STRICT"),
                verdict_of("chat/void-weather-tool", "generation.tool_call.arguments_json_object", "NON-STRICT"),
                verdict_of("chat/void-weather-tool", "chat.finish_reason.tool_calls_after_tool_call", "OK"),
                verdict_of("chat/echo-markup", "sse.framing.ends_with_done", "FAILED"),
                verdict_of("chat/echo-markup", "chat.object.matches_mode", "OK"),
                # A known limit of the target's dialect: the package expects it, and the file needs no row for it.
                verdict_of("responses/recorded-codex-0-171-0-1", "http.status.success_for_valid_request", "FAILED",
                           known_limit=True)]
    text, changes = rewritten(path.read_text(), load_expectations(path), verdicts, "a-server 1.1, today")
    path.write_text(text)
    rows = {(entry.check, entry.case): entry for entry in load_expectations(path).entries}
    assert text.startswith(TARGET_FILE[:TARGET_FILE.index("[[expected]]")])  # the header and its comment as written
    assert 'reason = "numbers calls from 1"\nseen = "a-server 1.0"\n' in text  # a row that holds, as written
    assert rows["generation.tool_call.arguments_json_object", "chat/void-weather-tool"].outcomes == \
        {"OK", "FAILED", "NON-STRICT"}
    assert ("chat.finish_reason.tool_calls_after_tool_call", "chat/void-weather-tool") not in rows
    # A model-dependent row that matches no verdict stays: the model may leave its check nothing to judge.
    assert rows["chat.finish_reason.length_at_max_tokens", "chat/void-weather-tool"].model_dependent
    new = rows["sse.framing.ends_with_done", "chat/echo-markup"]
    assert new.reason == PLACEHOLDER and new.outcomes == {"FAILED"} and new.seen == "a-server 1.1, today"
    # A verdict a glob row does not allow gets a row of its own ahead of it, which the file's order makes win.
    found = load_expectations(path).for_pair("chat/invalid-json", "errors.status.client_error_for_invalid_request")
    assert found.outcomes == {"NON-STRICT"} and found.reason == PLACEHOLDER
    assert ("http.status.success_for_valid_request", "responses/recorded-codex-0-171-0-1") not in rows
    assert len(changes) == 4 and placeholders(text) == [
        "errors.status.client_error_for_invalid_request chat/invalid-json", "sse.framing.ends_with_done chat/echo-markup"]


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures" / "targets").glob("*.toml")), ids=lambda path: path.stem)
def test_no_expected_verdict_of_a_real_server_is_left_without_its_reason(path):
    assert placeholders(path.read_text()) == [], f"{path.name}: write the reason of each row `make expected-real` added"
