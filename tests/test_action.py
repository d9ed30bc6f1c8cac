"""The reusable CI step (action.yml at the repository root): its inputs, its steps, and its run script, which is run
here against the reference server with a step-summary file of its own, as GitHub Actions would run it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import budget
import yaml
from bridge_pipe import closed_port

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "action" / "check.sh"
INPUTS = {"endpoint", "api-key", "model", "upstream", "expect", "checks", "strict", "repeat", "read-timeout", "agents"}


def step(tmp_path: Path, cases: tuple[str, ...] = (), **inputs: str) -> tuple[subprocess.CompletedProcess, str]:
    """The script with the action's inputs; returns what it did and what it appended to the step summary. In
    `make check`, the suite plays the sample of cases tests/budget.py picks, with `cases`."""
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n")
    # The suite `lmconform check` runs reads PYTEST_ADDOPTS, which carries make check's smaller budget.
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "LMCONFORM": str(Path(sys.executable).parent / "lmconform"),
           "PYTEST_ADDOPTS": " ".join((*budget.fuzz_options(), *budget.case_options(*cases))),
           **{f"INPUT_{name.upper().replace('-', '_')}": value for name, value in inputs.items()}}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    text = summary.read_text()
    assert text.startswith("earlier step's summary\n")  # appended, as GitHub asks
    return done, text.removeprefix("earlier step's summary\n")


def test_the_action_takes_the_inputs_runs_the_script_and_keeps_the_report():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert INPUTS <= set(action["inputs"]) and action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert any("action/check.sh" in step.get("run", "") for step in steps)
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ inputs.out }}"
    # Each input reaches the script under the name it reads, and the agents are installed only when asked for.
    script = next(step for step in steps if "action/check.sh" in step.get("run", ""))
    assert {f"INPUT_{name.upper().replace('-', '_')}" for name in INPUTS - {"api-key"}} <= set(script["env"])
    assert all(script["env"][f"INPUT_{name.upper().replace('-', '_')}"] == f"${{{{ inputs.{name} }}}}"
               for name in INPUTS - {"api-key"})
    agents = next(step for step in steps if step.get("run") == "lmconform agents install")
    assert agents["if"] == "inputs.agents != ''" and steps.index(agents) < steps.index(script)


def test_the_documented_steps_name_the_action_by_a_path_a_user_can_copy():
    """No package index serves lmconform and no name of it on GitHub is one to count on: the example workflow and
    docs/ci-gate.md use the action from a copy of lmconform's repository inside the user's, by one path, and install
    lmconform from it."""
    vendored = "./.github/actions/lmconform"
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions-proxy-gate.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    assert [step["uses"] for step in steps if "lmconform" in step.get("uses", "")] == [vendored]
    assert steps[0] == {"uses": "actions/checkout@v4", "with": {"submodules": True}}
    assert f"python -m pip install --quiet {vendored}\n" in "".join(step.get("run", "") for step in steps)
    documented = (ROOT / "docs" / "ci-gate.md").read_text()
    # The snippet of steps that use the action (the page's other one is a whole scheduled workflow).
    (snippet,) = [block for block in re.findall(r"^```yaml\n(.*?)^```", documented, re.MULTILINE | re.DOTALL)
                  if isinstance(yaml.safe_load(block), list)]
    assert [step.get("uses") for step in yaml.safe_load(snippet)] == ["actions/checkout@v4", vendored]
    for page in (ROOT / "README.md", ROOT / "docs" / "ci-gate.md", *(ROOT / "examples" / "ci").iterdir()):
        text = page.read_text()
        assert "YOUR-ORG" not in text and "pipx run lmconform" not in text and "pip install lmconform" not in text


def test_the_weekly_workflow_runs_each_agents_newest_version_and_gates_on_the_comparison():
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions-agents-weekly.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["schedule"][0]["cron"].split()[-1] == "1"  # once a week
    runs = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    pinned = next(run for run in runs if "--agents all" in run)
    latest = next(run for run in runs if "@latest," in run and "lmconform check" in run)
    assert "--out pinned" in pinned and "--out latest" in latest
    assert "claude-code@latest,codex@latest,opencode@latest" in latest
    assert "lmconform agents compare pinned/results.json latest/results.json" in runs


def test_the_script_writes_the_headline_to_the_step_summary_and_the_report_to_out(server, tmp_path):
    done, summary = step(tmp_path, endpoint=server.base_url, checks="chat.stream.tool_call.index_zero\nclient.void.*",
                         strict="true", out="report", cases=("chat/void-weather-tool",))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert summary.startswith("### lmconform: will it work with") and "| Void · Chat completions | ✓ works |" in summary
    assert {path.name for path in (tmp_path / "report").iterdir()} >= {"report.html", "results.json", "junit.xml"}


def test_the_script_fails_by_the_exit_status_and_says_why_in_the_summary(server, tmp_path):
    done, summary = step(tmp_path, endpoint=f"{server.base_url}/faults/tool-index-one",
                         checks="chat.stream.tool_call.index_zero", cases=budget.shown_by("tool-index-one"))
    assert done.returncode == 1 and "| Tool calls | ✗ breaks |" in summary
    done, summary = step(tmp_path, endpoint=f"http://127.0.0.1:{closed_port()}")
    assert done.returncode == 3
    assert "could not run (exit status 3)" in summary and "nothing answers at http://127.0.0.1:" in summary
    done, _ = step(tmp_path, strict="yes")
    assert done.returncode == 2 and "strict is true or false" in done.stderr
    done, summary = step(tmp_path, agents="claude-code@2.1")  # the agents input reaches lmconform check
    assert done.returncode == 2 and "'claude-code@2.1' names no version" in summary


def test_the_script_passes_the_repetitions_the_read_timeout_and_the_agents(server, tmp_path):
    done, _ = step(tmp_path, endpoint=server.base_url, repeat="2", checks="chat.stream.tool_call.index_zero",
                   cases=("chat/void-weather-tool",), **{"read-timeout": "45"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads((tmp_path / "lmconform-report" / "results.json").read_text())["results"]
    (weather,) = [row for row in rows if row["case"] == "chat/void-weather-tool"]
    assert weather["pass_k"] == "2/2"  # the case sent twice, and the check held both times
    for inputs, complaint in (({"read-timeout": "soon"}, "--read-timeout takes a number above 0"),
                              ({"agents": "cursor"}, "--agents")):  # what --agents says is its own to word
        done, summary = step(tmp_path, **inputs)
        assert done.returncode == 2 and complaint in done.stderr and complaint in summary, done.stderr


def test_the_script_passes_the_model_the_upstream_the_expected_failures_and_the_key(server, tmp_path, monkeypatch):
    """Every input reaches lmconform check: a known failure (--expect) passes the step, the model is the one asked
    for, the upstream is compared with (proxy checks judged), and the key, given as the action gives it, is sent and
    shown nowhere."""
    known = tmp_path / "known.toml"
    known.write_text('[[expected]]\ncheck = "chat.stream.tool_call.index_zero"\ncase = "chat/*"\noutcome = "FAILED"\n'
                     'reason = "the proxy numbers its first call 1"\n')
    key = "sk-action-canary-7341"
    monkeypatch.setenv("LMCONFORM_API_KEY", key)  # as action.yml passes its api-key input
    done, summary = step(tmp_path, endpoint=f"{server.base_url}/faults/tool-index-one", model="lmconform-reference",
                         upstream=server.base_url, expect=str(known), cases=budget.shown_by("tool-index-one"),
                         checks="chat.stream.tool_call.index_zero\nproxy.diff.status_preserved")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    record = json.loads((tmp_path / "lmconform-report" / "results.json").read_text())
    assert record["target"]["model"] == "lmconform-reference"
    outcomes = {(row["check"], row["outcome"]) for row in record["results"]}
    assert ("chat.stream.tool_call.index_zero", "FAILED") in outcomes
    assert any(check.startswith("proxy.diff.") for check, _ in outcomes)
    assert all(row.get("expected") for row in record["results"] if row["outcome"] == "FAILED")
    shown = done.stdout + done.stderr + summary + (tmp_path / "lmconform-report" / "results.json").read_text()
    assert key not in shown
    assert all("Authorization: Bearer [Filtered]" in curl for curl in record["curls"].values())
