"""The coding agents at any version, shown with a stand-in agent released in two versions as local npm-like packages
(tests/agent_stand_in.py): no network, no real agent.

- `NAME@VERSION` is parsed in one place for the plugin and `lmconform check`; a bad one is a usage error.
- A version other than the pin is installed once into a folder of its own, under the cache's lock, its size said
  first; one that cannot be installed is one line.
- Recording names the version and the shape of model id; re-recording a version leaves the others' cases alone.
- `agents diff` says what the newer version sends that the older did not, and which known causes now reach it.
- `agents matrix` lists the cells that changed, green → red first, and exits 1 on any green → red (the gate);
  `agents compare` does the same for the agents' cells of two results records.
- Each agent's profile names the version it was measured on; a run of another version says it is a prediction.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
from pathlib import Path

import pytest
from agent_stand_in import NEWER, OLDER, PACKAGE, StandIn, released

from lmconform.agents import AGENTS
from lmconform.agents.install import InstallError, install_version, pinned_version, version_dir
from lmconform.agents.outcome import Limits
from lmconform.agents.runner import run_agent
from lmconform.agents.versions import AgentAt, chosen_agents, parse_agent, parse_agents
from lmconform.agents_command import Refused, diff, matrix
from lmconform.cases import CASES_DIR, cases_folder
from lmconform.cli import main
from lmconform.fuzz.agents import summary
from lmconform.record.agents import agent_case, record
from lmconform.record.changes import compare
from lmconform.record.kept import slug
from lmconform.run import RunPlan
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Outcome

pytestmark = pytest.mark.waits

FAULTS = ["reasoning-effort-500", "arguments-object", "stop-ignored"]
CASE = agent_case(AGENTS["opencode"])  # the stand-in does opencode's task: it speaks chat completions


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """The stand-in's two releases, and a cache of agents of the module's own."""
    root = tmp_path_factory.mktemp("agents")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMCONFORM_AGENTS_CACHE", str(root / "cache"))
        yield released(root / "registry")


def quietly(command, *arguments) -> tuple[int, str]:
    """A command's exit status and what it wrote on stderr (its stdout is what --markdown writes too)."""
    said = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
        return command(*arguments), said.getvalue()


@pytest.fixture(scope="module")
def diffed(registry, tmp_path_factory) -> str:
    page = tmp_path_factory.mktemp("diff") / "diff.md"
    status, _ = quietly(diff, AgentAt(StandIn(), OLDER), AgentAt(StandIn(), "latest"), page, registry, CASE)
    assert status == 0
    return page.read_text()


@pytest.fixture(scope="module")
def compared(registry, tmp_path_factory) -> tuple[int, str]:
    page = tmp_path_factory.mktemp("matrix") / "matrix.md"
    status, _ = quietly(matrix, AgentAt(StandIn(), NEWER), AgentAt(StandIn(), OLDER), FAULTS, page, registry, CASE)
    return status, page.read_text()


# --- naming a version -----------------------------------------------------------------------------------------------

def test_an_agent_is_named_alone_or_with_a_version_or_a_tag():
    assert parse_agent("claude-code") == AgentAt(AGENTS["claude-code"])
    assert parse_agent("codex@0.172.0-alpha.3").wanted == "0.172.0-alpha.3"
    assert str(parse_agent("opencode@latest")) == "opencode@latest"
    assert [str(at) for at in parse_agents("all")] == list(AGENTS)
    for text, said in (("cursor", "no agent 'cursor'"), ("codex@", "names no version"),
                       ("codex@1..2", "names no version"), ("codex,codex@latest", "names codex twice"),
                       ("", "--agents takes agents among")):
        with pytest.raises(ValueError, match=said):
            parse_agents(text)


def test_the_pinned_version_needs_no_install_and_reaches_the_run_by_name():
    pinned = pinned_version(AGENTS["claude-code"])
    assert chosen_agents(f"claude-code@{pinned},opencode") == (f"claude-code@{pinned},opencode", {})


def test_a_run_runs_the_version_its_settings_name(server, tmp_path, monkeypatch):
    """What `--agents claude-code@2.1.999` leaves in the settings reaches the run: the agent is run from that
    version's folder (here not installed, so its verdicts say how to install that very version)."""
    monkeypatch.setenv("LMCONFORM_AGENTS_CACHE", str(tmp_path))
    settings = RunSettings(agents=("claude-code",), agent_versions=(("claude-code", "2.1.999"),), fuzz_examples=0)
    plan = RunPlan(Target(base_url=server.base_url), apis=("messages",), settings=settings,
                   include=("agent.answer.reached_user",))
    run = plan.start()
    try:
        verdicts = [run.judge(case, check) for case, check in plan.pairs("messages") if case.agent is not None]
    finally:
        run.close()
    # One verdict per case of Claude Code's: given the target's model id, and given a `claude-*` one.
    assert [verdict.outcome for verdict in verdicts] == [Outcome.UNSUPPORTED] * 2
    assert {verdict.detail for verdict in verdicts} == {
        "Claude Code is not installed: `lmconform agents install claude-code@2.1.999` installs it"}


# --- installing a version -------------------------------------------------------------------------------------------

def test_a_version_is_installed_once_into_a_folder_of_its_own_its_size_said_first(registry):
    said: list[str] = []
    node_modules = install_version(StandIn(), OLDER, registry, said.append)
    assert node_modules == version_dir(StandIn(), OLDER) / "node_modules"
    assert StandIn().version(node_modules) == OLDER
    assert said == [f"installing Stand-in {OLDER} into {version_dir(StandIn(), OLDER)}: about 1 MB will be "
                    f"downloaded, as Stand-in {OLDER} took"]
    assert install_version(StandIn(), OLDER, registry, said.append) == node_modules and len(said) == 1


def test_two_runs_asking_for_one_version_at_once_install_it_once(registry, tmp_path, monkeypatch):
    monkeypatch.setenv("LMCONFORM_AGENTS_CACHE", str(tmp_path / "cache"))
    registry.fetched.clear()
    found: list[Path] = []
    runs = [threading.Thread(target=lambda: found.append(install_version(StandIn(), NEWER, registry, print)))
            for _ in range(3)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert registry.fetched == [NEWER] and len(set(found)) == 1 and len(found) == 3


def test_a_version_that_cannot_be_installed_is_one_line(registry):
    with pytest.raises(Refused) as refused:
        quietly(matrix, AgentAt(StandIn(), "9.9.9"), AgentAt(StandIn(), OLDER), [], None, registry, CASE)
    assert str(refused.value) == "stand-in@9.9.9: no version 9.9.9 of lmconform-stand-in"
    with pytest.raises(InstallError, match="no lmconform-stand-in@nightly") as failed:
        registry.resolve(PACKAGE, "nightly")
    assert "\n" not in str(failed.value)


FAILING_NPM = """#!/bin/sh
# npm as it answers for a version its registry lacks: `view` names the newest, `install` cannot find it.
if [ "$1" = view ]; then echo '"2.1.999"'; exit 0; fi
echo "npm error code ETARGET"
echo "npm error notarget No matching version found for @anthropic-ai/claude-code@2.1.999."
echo "npm error A complete log of this run can be found in: /tmp/npm.log"
exit 1
"""


def test_a_run_asking_for_a_version_npm_cannot_install_stops_with_one_line_and_exit_status_2(tmp_path, monkeypatch,
                                                                                              capsys):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "npm").write_text(FAILING_NPM)
    (tmp_path / "bin" / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("LMCONFORM_AGENTS_CACHE", str(tmp_path / "cache"))
    assert main(["check", "--agents", "claude-code@latest", "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error == ("lmconform check: installing Claude Code 2.1.999 into " f"{tmp_path / 'cache' / 'claude-code-2.1.999'}: "
                     "about 190 MB will be downloaded, as Claude Code 2.1.332 took\n"
                     "lmconform check: claude-code@latest: npm failed (exit status 1): No matching version found for "
                     "@anthropic-ai/claude-code@2.1.999. (all it said: "
                     f"{tmp_path / 'cache' / 'claude-code-2.1.999' / 'install.log'})\n")


def test_the_agents_commands_refuse_a_bad_name_with_one_line_and_exit_status_2(capsys):
    for argv, said in ((["agents", "diff", "claude-code@1.0.0", "codex@1.0.0"], "two agents"),
                       (["agents", "matrix", "cursor@1.0.0"], "no agent 'cursor'"),
                       (["agents", "matrix", "claude-code", "--fault", "tool-index-one"], "not a defect of"),
                       (["agents", "install", "codex@1..2"], "names no version")):
        assert main(argv) == 2, argv
        error = capsys.readouterr().err
        assert said in error and error.count("\n") == 1, error


# --- recording a version --------------------------------------------------------------------------------------------

def test_each_shape_of_model_id_is_recorded_and_named_and_a_version_replaces_only_its_own(registry, tmp_path):
    other = tmp_path / "chat" / "recorded-stand-in-0-9-0-1.json"
    other.parent.mkdir()
    other.write_text("another version's case")
    recordings = record(StandIn(), tmp_path, install_version(StandIn(), NEWER, registry, print), print, CASE)
    assert [recording.shape.name for recording in recordings] == ["local", "claude"]
    names = sorted(path.name for path in (tmp_path / "chat").iterdir())
    assert names == ["recorded-stand-in-0-9-0-1.json", "recorded-stand-in-2-0-0-1.json",
                     "recorded-stand-in-2-0-0-2.json", "recorded-stand-in-2-0-0-claude-id-1.json",
                     "recorded-stand-in-2-0-0-claude-id-2.json"]
    local, claude = (json.loads((tmp_path / "chat" / f"recorded-stand-in-2-0-0{shape}-1.json").read_text())
                     for shape in ("", "-claude-id"))
    assert (local["provenance"]["model_shape"], claude["provenance"]["model_shape"]) == ("local", "claude")
    assert "given the model id claude-sonnet-4-5 (a `claude-*` id)" in claude["provenance"]["note"]
    assert local["provenance"]["client"] == "stand-in 2.0.0"
    assert [message["role"] for message in local["request"]["body"]["messages"]] == ["system", "user"]
    assert [message["role"] for message in claude["request"]["body"]["messages"]] == ["user"]
    record(StandIn(), tmp_path, install_version(StandIn(), NEWER, registry, print), print, CASE)
    assert sorted(path.name for path in (tmp_path / "chat").iterdir()) == names
    assert other.read_text() == "another version's case"


def test_claude_code_is_on_record_sending_a_local_model_what_it_does_not_send_a_claude_model():
    """The recorded cases of the pinned Claude Code, one set per shape of model id: what a recording of "Claude Code's
    requests" holds depends on the id it was given, and the cases say which."""
    agent = AGENTS["claude-code"]
    shapes: dict[str, list[dict]] = {}
    for path in cases_folder(CASES_DIR, agent.api).glob(f"recorded-claude-code-{slug(agent.measured)}-*.json"):
        document = json.loads(path.read_text())
        shapes.setdefault(document["provenance"]["model_shape"], []).append(document)
    assert sorted(shapes) == ["claude", "local"]
    only_local = {change.kind: change.added for change in compare(shapes["claude"], shapes["local"])}
    assert "messages[].role: system" in only_local["roles"]
    assert "thinking.type: adaptive" in only_local["types"]
    assert any(field.startswith("output_config") for field in only_local["fields"])
    assert "anthropic-beta: effort-2025-11-24" in only_local["betas"]


# --- what changed ---------------------------------------------------------------------------------------------------

def test_the_diff_says_part_by_part_what_the_newer_version_sends(diffed):
    local, claude = diffed.split("Given a `claude-*` id")
    assert local.startswith(f"### Stand-in {OLDER} → {NEWER}\n\nGiven a local model's id (`lmconform-reference`): "
                            f"{OLDER} sent 2 requests (")
    assert "- query strings: new `/v1/chat/completions?beta=true`\n" in local
    assert "- beta flags: new `openai-beta: flag-b`\n" in local
    assert "- fields: new `reasoning_effort`, `stream`" in local
    assert "- roles: new `messages[].role: system`\n" in local
    assert "- roles:" not in claude  # given a claude-* id, the newer version sends no system message
    # Its answers are streamed now: the checks of a stream judge them, and the defects of a stream reach it, as does
    # a server that answers `reasoning_effort` with a 500.
    checks = next(line for line in local.splitlines() if line.startswith("- checks that judge something new"))
    assert "`chat.stream.tool_call.index_zero`" in checks and "`sse.framing.ends_with_done`" in checks
    causes = next(line for line in local.splitlines() if line.startswith("- known causes") and "now" in line)
    assert "`reasoning-effort-500`" in causes and "`tool-index-one`" in causes
    assert claude.endswith(f"`lmconform agents record --agent stand-in@{NEWER}` adds {NEWER}'s recorded cases to "
                           "lmconform's.\n")


def test_a_version_compared_with_itself_changed_nothing(registry, tmp_path):
    page = tmp_path / "diff.md"
    assert quietly(diff, AgentAt(StandIn(), OLDER), AgentAt(StandIn(), OLDER), page, registry, CASE)[0] == 0
    assert page.read_text().count("Nothing changed in what Stand-in sends.") == 2


def test_the_matrix_lists_the_changed_cells_green_to_red_first_and_the_gate_exits_1(compared):
    status, page = compared
    assert status == 1
    assert page.startswith(f"### Stand-in {NEWER}\n")
    assert "| `reasoning-effort-500` | ✗ breaks | ! | · | ✗ | ✓ | ✗ | · | showed: HTTP 500" in page
    assert "`stop-ignored`." in page  # it changes none of the answers either version gets
    changes = page.partition(f"#### Stand-in {NEWER} against {OLDER}")[2]
    rows = [line for line in changes.splitlines() if line.startswith("| `")]
    # The grade first, from works to breaks; a refusal is a SHOULD, no cell that turns red by itself.
    assert rows == ["| `reasoning-effort-500` | grade (green → red) | ✓ works | ✗ breaks |",
                    "| `reasoning-effort-500` | answer (green → red) | ✓ | ✗ |",
                    "| `reasoning-effort-500` | no error (green → red) | ✓ | ✗ |",
                    "| `reasoning-effort-500` | accepted | ✓ | ! |",
                    "| `reasoning-effort-500` | tool run | ✓ | · |"]
    assert f"measured on {OLDER}: {NEWER} is run and read as {OLDER} was, a prediction" in page


def test_the_gate_passes_a_version_whose_cells_did_not_change(registry, tmp_path):
    page = tmp_path / "matrix.md"
    assert quietly(matrix, AgentAt(StandIn(), OLDER), AgentAt(StandIn(), OLDER), FAULTS[:2], page, registry,
                   CASE)[0] == 0
    assert f"No cell changed: Stand-in {OLDER} does against each defect what {OLDER} does." in page.read_text()


# --- two runs against one server ------------------------------------------------------------------------------------

def results(tmp_path: Path, name: str, label: str, outcomes: dict[str, str]) -> Path:
    rows = [{"case": "messages/agent-claude-code", "check": check, "kind": "agent", "level": "MUST",
             "outcome": outcome, "agent": label} for check, outcome in outcomes.items()]
    document = {"lmconform": "0.1.0", "target": {"url": "http://127.0.0.1:1234", "label": "my-server"},
                "started": "2026-12-01T10:00:00Z", "duration_s": 1.0, "results": rows}
    (path := tmp_path / name).write_text(json.dumps(document))
    return path


def test_compare_fails_when_an_agent_that_worked_no_longer_does(tmp_path, capsys, monkeypatch):
    summary_file = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    worked = {"agent.answer.reached_user": "OK", "agent.error.none_shown": "OK", "agent.loop.bounded": "FAILED"}
    before = results(tmp_path, "before.json", "Claude Code 2.1.332", worked)
    same = results(tmp_path, "same.json", "Claude Code 2.1.340", worked)
    broke = results(tmp_path, "after.json", "Claude Code 2.1.340", {**worked, "agent.answer.reached_user": "ERROR",
                                                                    "agent.loop.bounded": "OK"})
    assert main(["agents", "compare", str(before), str(same)]) == 0
    assert "- Claude Code 2.1.332 → Claude Code 2.1.340: no cell changed" in capsys.readouterr().out
    assert main(["agents", "compare", str(before), str(broke)]) == 1
    out = capsys.readouterr().out
    assert "2 cells changed, 1 green → red" in out
    assert out.index("| Claude Code | answer (green → red) | ✓ | ⚠ |") < out.index("| Claude Code | no loop | ✗ | ✓ |")
    assert summary_file.read_text().count("### The agents against my-server: what changed") == 2
    nothing = results(tmp_path, "none.json", "", {})
    for argv, said in (([str(before), str(nothing)], "no agent in common"),
                       ([str(before), str(tmp_path / "missing.json")], "no such file")):
        assert main(["agents", "compare", *argv]) == 2
        assert said in capsys.readouterr().err


# --- the profile's version ------------------------------------------------------------------------------------------

def test_each_agent_profile_was_measured_on_its_pinned_version():
    for agent in AGENTS.values():
        assert agent.measured == pinned_version(agent), agent.name
        assert agent.prediction(agent.measured) == ""
    assert AGENTS["codex"].prediction("0.172.0") == (
        "lmconform's profile of Codex CLI was measured on 0.171.0: 0.172.0 is run and read as 0.171.0 was, a "
        "prediction until it is measured")


def test_a_run_of_an_unmeasured_version_says_it_is_a_prediction(registry, server):
    run = run_agent(StandIn(), Target(base_url=server.base_url), CASE.agent.task, CASE.agent.secret,
                    Limits(seconds=60, requests=6), install_version(StandIn(), NEWER, registry, print))
    assert run.label == f"Stand-in {NEWER}" and run.outcome.final_text
    assert summary(run).endswith(f"  {StandIn().prediction(NEWER)}")
