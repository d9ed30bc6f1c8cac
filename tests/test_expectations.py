"""--expect: known failures gate a CI run on "no new failures", and a fixed defect is noticed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lmconform.expectations import ExpectationError, load_expectations

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
    command = [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_known_failures_pass_the_gate_and_are_recorded(server, tmp_path):
    expect, results = tmp_path / "known.toml", tmp_path / "results.json"
    expect.write_text(KNOWN)
    finished = suite("--endpoint", f"{server.base_url}/faults/tool-index-one", "--checks",
                     "chat.stream.tool_call.index_zero", "--expect", str(expect), "--results-json", str(results))
    assert finished.returncode == 0, finished.stdout[-1500:]
    assert "xfailed" in finished.stdout
    rows = json.loads(results.read_text())["results"]
    assert rows and all(row["outcome"] == "FAILED" and row["expected"]["reason"] for row in rows)


def test_a_new_failure_still_fails_the_gate(server, tmp_path):
    expect = tmp_path / "known.toml"
    expect.write_text(KNOWN)
    finished = suite("--endpoint", f"{server.base_url}/faults/tool-index-one,tool-id-missing", "--checks",
                     "chat.stream.tool_call.*", "--expect", str(expect))
    assert finished.returncode == 1
    assert "[chat.stream.tool_call.starts_with_id_and_name]" in finished.stdout


def test_a_known_failure_that_passes_fails_the_gate(server, tmp_path):
    expect = tmp_path / "known.toml"
    expect.write_text(KNOWN)
    finished = suite("--endpoint", server.base_url, "--checks", "chat.stream.tool_call.index_zero",
                     "--expect", str(expect))
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
