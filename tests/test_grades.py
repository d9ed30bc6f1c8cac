"""Will it work? Every client and surface graded works, works with limits, breaks or not offered
(lmconform.verdicts): each replaying client against the clean reference server and a fault that breaks it; a surface
with a broken SHOULD, and one whose only breakage is a known limit of the target's dialect; an agent predicted from
its profile, and a live grade that differs from the prediction. (The coding agents' live grades against the real
agents: tests/test_agents.py.)"""

from __future__ import annotations

from pathlib import Path

import budget
import pytest

from lmconform.api_table import APIS
from lmconform.checks.registry import REGISTRY
from lmconform.reference import FAULTS
from lmconform.verdicts.headline import build_headline
from lmconform.verdicts.profiles import Profile, predict
from lmconform.verdicts.records import results_of
from tools.catalogue import load, server_run

TABLE = load()
# Each client lmconform replays answers through, by its checks' surface and the API it replays: the first fault of
# the catalogue that fails one of its checks, and the cases that fault's findings show on.
CLIENTS = sorted({(surface, api.name) for api in APIS.values() for surface in api.clients})


def breaking_fault(surface: str, api: str) -> str:
    """The first fault of the API's catalogue that fails one of the client's checks."""
    return next(name for name, row in TABLE.server.items() if FAULTS[name].api == api
                and any(check.startswith(surface + ".") for check in row.findings))


def row(case: str, check: str, outcome: str, level: str = "MUST", expected: dict | None = None,
        actual: str = "what happened", kind: str = "wire", agent: str = "") -> dict:
    return {"case": case, "check": check, "kind": kind, "level": level, "outcome": outcome, "title": check,
            "message": f"[{check}] {check}\nActual:   {actual}", "evidence": "", "curl": "", "agent": agent,
            **({"expected": expected} if expected else {})}


def headline(rows: list[dict], profile: str | None = None, fingerprint: str = "lmstudio"):
    document = {"lmconform": "0.1.0", "target": {"url": "http://127.0.0.1:1234", "label": "127.0.0.1:1234",
                                                 "profile": profile, "fingerprint": {"kind": fingerprint}},
                "started": "2026-12-02T10:00:00Z", "duration_s": 1.0, "results": rows}
    return {line.key: line for line in build_headline(results_of(document, Path("run.json")).results).lines}


@pytest.mark.parametrize(("surface", "api"), CLIENTS, ids=[f"{surface}-{api}" for surface, api in CLIENTS])
def test_each_replaying_client_works_on_the_clean_server_and_breaks_on_a_fault_that_breaks_it(server, surface, api):
    fault = breaking_fault(surface, api)
    cases = budget.cases_played(TABLE.server[fault].shown_by, (api,))
    key = f"client-{surface.removeprefix('client.').replace('_', '-')}-{api.replace('_', '-')}"
    for against, grade in ((None, "works"), (fault, "breaks")):
        run = server_run(server.base_url, against, (api,), cases)
        lines = {line.key: line for line in build_headline(
            results_of(run.results(), Path("run.json")).results).clients}
        assert lines[key].status == grade, f"{surface} against {against or 'the clean server'}: {lines[key].why}"


def test_a_client_that_breaks_on_every_tool_call_breaks_however_well_it_reads_text():
    lines = headline([row("chat/text", "client.void.no_error", "OK", kind="client"),
                      row("chat/tool-stream", "client.void.tool_call_parsed", "FAILED", kind="client")])
    assert lines["client-void-chat"].status == "breaks"


def test_a_surface_with_a_broken_should_works_with_limits_naming_each():
    lines = headline([row("chat/a", "chat.stream.usage.reported_when_asked", "NON-STRICT", "SHOULD"),
                      row("chat/b", "chat.object.matches_mode", "OK")])
    line = lines["surface-chat-completions"]
    assert (line.status, line.verdict) == ("works with limits", "! works with limits")
    assert line.limits == ("chat.stream.usage.reported_when_asked",) and line.why.startswith("chat.stream.usage")


def test_a_surface_whose_only_breakage_is_a_known_limit_of_the_dialect_works_with_limits_and_says_why():
    expected = {"outcomes": ["FAILED"], "model_dependent": False, "reason": "…",
                "file": "lmconform/verdicts/causes.toml#lmstudio-responses-function-tools-only"}
    refused = row("responses/recorded-codex-0-171-0-1", "http.status.success_for_valid_request", "FAILED",
                  expected=expected, actual="HTTP 400: Invalid discriminator value. Expected 'function' (at tools.4.type)")
    lines = headline([refused, row("chat/a", "http.status.success_for_valid_request", "OK")])
    http = lines["surface-http"]
    assert http.status == "works with limits" and http.cause.id == "lmstudio-responses-function-tools-only"
    assert http.limits == ("a known limit of the target's dialect: the Responses API takes function tools only",)
    # Without the expectation (a server of another dialect), the same finding breaks the surface.
    assert headline([{**refused, "expected": None}])["surface-http"].status == "breaks"


def test_an_api_the_target_does_not_offer_is_not_offered_for_every_optional_api():
    for api in (api for api in APIS.values() if api.optional):
        rows = [row(f"{api.name}/x", "http.status.success_for_valid_request", "UNSUPPORTED")]
        assert all(line.status == "not offered" for line in headline(rows).values()), api.name


PROFILE = Profile("claude-code", "Claude Code", "2.1.332", "messages", "2026-12-02",
                  {"clean": "works", "messages-block-not-stopped": "breaks"},
                  {"messages.stream.block.stopped": "breaks", "messages.stream.start_first": "survives",
                   "http.status.success_for_valid_request": "limits"})


def test_an_agent_not_run_is_predicted_from_its_profile_and_says_so(monkeypatch):
    monkeypatch.setattr("lmconform.verdicts.agents.agent_profiles", lambda: {"claude-code": PROFILE})
    rows = [row("messages/text", "messages.stream.start_first", "FAILED"),
            row("messages/tool", "messages.stream.block.stopped", "FAILED"),
            row("messages/tool", "messages.stream.never.seen", "FAILED")]
    line = headline(rows)["agent-claude-code-messages"]
    assert (line.status, line.verdict) == ("breaks", "✗ breaks (predicted)")
    assert line.worst.check == "messages.stream.block.stopped" and line.unmeasured == ("messages.stream.never.seen",)
    assert ("basis", "predicted from Claude Code 2.1.332's matrix") in line.notes
    # A known cause says what a finding does to the agent before the profile does: Claude Code works round a refused
    # system turn.
    refused = row("messages/recorded-claude-code-2-1-332-1", "http.status.success_for_valid_request", "FAILED",
                  actual="HTTP 400: messages.1.role: Input should be 'user' or 'assistant'")
    line = headline([refused])["agent-claude-code-messages"]
    assert line.status == "works with limits" and line.cause.id == "system-turn-refused" and "0.4.15" in line.way_round
    # Nothing of the agent's API judged (or offered): no prediction.
    assert "agent-claude-code-messages" not in headline([row("chat/a", "chat.object.matches_mode", "OK")])


def test_a_live_grade_the_profile_did_not_predict_says_so(monkeypatch):
    monkeypatch.setattr("lmconform.verdicts.agents.agent_profiles", lambda: {"claude-code": PROFILE})
    live = [row("messages/agent-claude-code", "agent.answer.reached_user", "FAILED", kind="agent",
                agent="Claude Code 2.1.340", actual="it showed no answer")]
    line = headline(live + [row("messages/text", "messages.stream.start_first", "FAILED")])["agent-claude-code-messages"]
    assert (line.status, line.basis) == ("breaks", "run live")
    assert line.differs.startswith("predicted from Claude Code 2.1.332's matrix, Claude Code 2.1.340 not measured: "
                                   "works")


def test_a_prediction_reads_every_finding_of_the_agents_api_and_nothing_else():
    prediction = predict(PROFILE, results_of({"target": {"url": "", "label": "t"}, "results": [
        row("chat/x", "messages.stream.block.stopped", "FAILED"),
        row("messages/y", "messages.stream.block.stopped", "OK"),
        row("messages/z", "http.status.success_for_valid_request", "NON-STRICT", "SHOULD")]}, Path("r.json")).results)
    assert prediction.grade == "works with limits" and [reason.row.case for reason in prediction.reasons] == ["messages/z"]


def test_every_check_a_profile_names_exists():
    from lmconform.verdicts.profiles import agent_profiles

    for profile in agent_profiles().values():
        assert set(profile.checks) <= set(REGISTRY), profile.agent
        assert set(profile.faults.values()) <= {"works", "works with limits", "breaks"}


def test_each_apis_topics_name_checks_it_has_and_gather_them_under_one_line():
    for api in APIS.values():
        for prefixes in api.topics.values():
            for prefix in prefixes:
                assert prefix.startswith(api.name + "."), (api.name, prefix)
                assert any(check.startswith(prefix) for check in REGISTRY), (api.name, prefix)
    # A tool-call failure of Anthropic Messages, native chat or the VS Code bridge is a tool-call failure.
    rows = [row("messages/tool", "messages.tool_use.block_complete", "FAILED"),
            row("native_chat/tool", "native_chat.stream.tool_call_events", "OK"),
            row("chat/tool", "chat.stream.tool_call.index_zero", "OK")]
    lines = headline(rows)
    assert lines["surface-tool-calls"].status == "breaks" and "surface-anthropic-messages" not in lines
