"""`lmconform record`: the recording endpoint writes valid, redacted case files, atomically and never over a
file; chained turns become follow-ups; and the committed recorded-* cases still match what the pinned SDKs send."""

from __future__ import annotations

import argparse
import difflib
import json
import os
from pathlib import Path

import httpx
import pytest

from lmconform.cases import call_answer, case_files, chain_probe, load_case
from lmconform.cases.reader import api_of_file
from lmconform.cases.writer import create
from lmconform.record import UNKNOWN_PREVIOUS_MARKER, RecordingServer, client_identity, loopback_base_url, register
from lmconform.reference import ReferenceServer
from lmconform.wire.redact import FILTERED
from tools.recorders import clients

ROOT = Path(__file__).resolve().parent.parent
CANARY = "sk-canary-4b1d0c9e7f"
PYTHON_SDK = {"user-agent": "OpenAI/Python 3.54.0", "x-stainless-lang": "python",
              "x-stainless-package-version": "3.54.0", "x-stainless-os": "Linux", "x-stainless-retry-count": "0"}
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}
CALCULATE_TOOL = {"type": "function", "name": "calculate", "parameters": {
    "type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}




@pytest.fixture
def recording(tmp_path):
    """A recording endpoint writing under tmp_path; yields (server, the lines it reported)."""
    lines: list[str] = []
    with RecordingServer(tmp_path, report=lines.append) as server:
        yield server, lines


def post(server, path: str, body, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(server.base_url + path, json=body, headers={**PYTHON_SDK, **(headers or {})}, timeout=10)


def cases_in(folder: Path) -> dict[str, dict]:
    return {f"{path.parent.name}/{path.name}": json.loads(path.read_text()) for path in sorted(folder.rglob("*.json"))}


def test_each_request_becomes_a_valid_case_with_its_provenance(recording, tmp_path):
    server, _ = recording
    post(server, "/v1/chat/completions", {"model": "qwen3", "stream": True, "tools": [WEATHER_TOOL],
                                          "messages": [{"role": "user", "content": "What's the weather in Paris?"}]},
         {"X-Lmconform-Label": "stream with a tool"})
    post(server, "/v1/responses", {"model": "qwen3", "input": "Calculate 7*6", "tools": [CALCULATE_TOOL]})
    post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "tool_choice": "sometimes"})

    written = sorted(tmp_path.rglob("*.json"))
    assert [f"{path.parent.name}/{path.name}" for path in written] == [
        "chat/recorded-openai-python-chat-completions-1.json", "chat/recorded-openai-python-chat-completions-2.json",
        "responses/recorded-openai-python-responses-1.json"]
    stream, refused, response = (load_case(path) for path in written)
    assert stream.description == "openai-python: stream with a tool"
    assert stream.provenance["source"] == "recorded from openai-python 3.54.0"
    assert stream.provenance["client"] == "openai-python 3.54.0"
    assert "model" not in stream.body and stream.streamed and stream.valid and stream.feature is None
    # Transport headers and those that differ between machines or tries are not evidence of the client.
    assert set(stream.provenance["headers"]) == {"user-agent", "x-stainless-lang", "x-stainless-package-version",
                                                 "accept", "content-type"}
    assert refused.invalid and "Invalid tool_choice value" in refused.provenance["note"]
    assert response.feature == "responses" and response.valid and response.path == "/v1/responses"


def test_credentials_are_filtered_from_every_written_file(recording, tmp_path):
    server, _ = recording
    credentials = {"Authorization": f"Bearer {CANARY}", "api-key": CANARY, "x-api-key": CANARY,
                   "Cookie": f"session={CANARY}; theme=dark"}
    body = {"messages": [{"role": "user", "content": f"my key is {CANARY}"}], "user": CANARY}
    post(server, "/v1/chat/completions", body, credentials)
    post(server, "/v1/chat/completions", {"tool_choice": CANARY, "messages": [{"role": "user", "content": "x"}]},
         credentials)  # refused, and the refusal echoes the key into the note

    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) == 2
    for path in written:
        assert CANARY not in path.read_text(), path
    case = load_case(tmp_path / "chat" / "recorded-openai-python-chat-completions-1.json")
    headers = case.provenance["headers"]
    assert headers["authorization"] == f"Bearer {FILTERED}"
    assert headers["api-key"] == headers["x-api-key"] == headers["cookie"] == FILTERED
    assert case.body["messages"][0]["content"] == f"my key is {FILTERED}"


def test_an_existing_case_is_never_overwritten(recording, tmp_path):
    server, lines = recording
    existing = tmp_path / "chat" / "recorded-openai-python-chat-completions-1.json"
    existing.parent.mkdir()
    existing.write_text("kept as it is")
    post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})
    assert existing.read_text() == "kept as it is"
    assert load_case(existing.with_name("recorded-openai-python-chat-completions-2.json")).valid
    assert lines == ["kept chat/recorded-openai-python-chat-completions-2.json (HTTP 200, openai-python 3.54.0)"]


def test_a_file_is_created_whole_or_not_at_all(tmp_path):
    target = tmp_path / "case.json"
    assert create(target, {"a": 1})
    assert not create(target, {"a": 2}), "a second write to the same name is refused"
    assert json.loads(target.read_text()) == {"a": 1}
    with pytest.raises(TypeError):
        create(tmp_path / "broken.json", {"a": object()})  # fails half-way through writing
    assert sorted(path.name for path in tmp_path.iterdir()) == ["case.json"], "no partial or temporary file left"


def test_a_chained_turn_becomes_the_turns_of_the_case_it_continues(recording, tmp_path):
    server, lines = recording
    first = post(server, "/v1/responses", {"input": "Remember the word 'heliotrope' for later.", "stream": True},
                 {"X-Lmconform-Label": "a chain"})
    first_id = next(json.loads(line[5:])["response"]["id"] for line in first.text.splitlines()
                    if line.startswith("data:"))
    second = post(server, "/v1/responses", {"input": "What word did I ask you to remember?",
                                            "previous_response_id": first_id, "stream": True})
    second_id = next(json.loads(line[5:])["response"]["id"] for line in second.text.splitlines()
                     if line.startswith("data:"))
    post(server, "/v1/responses", {"input": "And again?", "previous_response_id": second_id})
    post(server, "/v1/responses", {"input": "Continue.", "previous_response_id": "resp_from_elsewhere"})
    httpx.get(f"{server.base_url}/v1/responses/{first_id}", timeout=10)

    chain = load_case(tmp_path / "responses" / "recorded-openai-python-responses-1.json")
    assert chain.turns == chain_probe("What word did I ask you to remember?")
    assert chain.previous_response_id is None
    assert "previous_response_id" in chain.provenance["note"]
    unknown = load_case(tmp_path / "responses" / "recorded-openai-python-responses-2.json")
    assert unknown.invalid and unknown.previous_response_id == UNKNOWN_PREVIOUS_MARKER
    assert sorted(path.name for path in (tmp_path / "responses").iterdir()) == [
        "recorded-openai-python-responses-1.json", "recorded-openai-python-responses-2.json"]
    assert lines[1] == "turns added to responses/recorded-openai-python-responses-1.json"
    assert lines[2].startswith("not kept: POST /v1/responses: chained turn: it continues a turn that cannot")
    assert lines[4].startswith(f"not kept: GET /v1/responses/{first_id}: the suite has no cases")


def test_a_function_call_output_turn_becomes_the_answer_to_the_first_turns_call(recording, tmp_path):
    server, _ = recording
    called = post(server, "/v1/responses", {"input": "Calculate 12/4", "tools": [CALCULATE_TOOL],
                                            "tool_choice": "required"}).json()
    call = next(item for item in called["output"] if item["type"] == "function_call")
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "3"}
    post(server, "/v1/responses", {"previous_response_id": called["id"], "tools": [CALCULATE_TOOL], "input": [output]})
    case = load_case(tmp_path / "responses" / "recorded-openai-python-responses-1.json")
    assert case.turns == call_answer("3")


def test_an_upstream_on_this_machine_answers_instead(tmp_path):
    with ReferenceServer(faults=["tool-index-one"]) as upstream, RecordingServer(
            tmp_path, client="my proxy", upstream=upstream.base_url + "/v1", report=[].append) as server:
        answer = post(server, "/v1/chat/completions", {"stream": True, "tools": [WEATHER_TOOL],
                                                       "messages": [{"role": "user", "content": "weather in Oslo?"}]})
    assert '"index":1' in answer.text, "the upstream's own answer, fault included"
    case = load_case(tmp_path / "chat" / "recorded-my-proxy-chat-completions-1.json")
    assert case.provenance["client"] == "my proxy 3.54.0" and "loopback upstream" in case.provenance["note"]


@pytest.mark.parametrize("url", ["http://10.0.0.5:1234", "http://example.com/v1", "ftp://127.0.0.1"])
def test_an_upstream_elsewhere_is_refused(url):
    with pytest.raises(ValueError):
        loopback_base_url(url)


@pytest.mark.parametrize("headers, identity", [
    (PYTHON_SDK, ("openai-python", "3.54.0")),
    ({"user-agent": "OpenAI/JS 6.49.0", "x-stainless-lang": "js", "x-stainless-package-version": "6.49.0"},
     ("openai-node", "6.49.0")),
    ({**PYTHON_SDK, "user-agent": "Agents/Python 0.24.0"}, ("openai-agents", "0.24.0 (openai-python 3.54.0)")),
    ({"user-agent": "curl/8.5.0"}, ("curl", "8.5.0")),
    # An application built on an SDK names itself: Claude Code runs on the anthropic TypeScript SDK.
    ({"user-agent": "claude-cli/2.1.332 (external, sdk-cli)", "x-stainless-lang": "js",
      "x-stainless-package-version": "0.128.0"}, ("claude-cli", "2.1.332")),
    ({}, ("unknown-client", "unknown version")),
])
def test_the_client_is_named_from_its_headers(headers, identity):
    assert client_identity(headers) == identity


def test_the_command_refuses_an_api_folder_as_its_destination(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["record", "--listen", "0", "--to", str(tmp_path / "chat")])
    assert args.handler(args) == 2
    assert "cases folder" in capsys.readouterr().err


def test_a_port_out_of_range_is_argparses_usage_error_not_a_traceback(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="lmconform")
    register(parser.add_subparsers())
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["record", "--listen", "99999", "--to", str(tmp_path)])
    assert exit_.value.code == 2
    assert "argument --listen: takes a whole number from 0 to 65535, not '99999'" in capsys.readouterr().err


# --- re-recording --------------------------------------------------------------------------------------------------
# The committed recorded-<client>-* cases are what the pinned SDK versions send. Re-running each recorder must
# produce the same files with the same request shape: method, path, key sets, JSON types, enumerated values (type,
# role, status, tool_choice) and booleans. Ids, free text and the model are not compared.

ENUMERATED = frozenset({"type", "role", "status", "tool_choice"})


def request_shape(value, key: str | None = None):
    if isinstance(value, dict):
        return {name: request_shape(item, name) for name, item in sorted(value.items())}
    if isinstance(value, list):
        return [request_shape(item, key) for item in value]
    if isinstance(value, str):
        return value if key in ENUMERATED else "string"
    if isinstance(value, bool) or value is None:
        return value
    return "integer" if isinstance(value, int) else "number"


def case_shape(case: dict) -> dict:
    return {"request": request_shape(case["request"]), "turns": request_shape(case.get("turns")),
            "expect": case["expect"], "feature": case.get("feature"), "description": case["description"],
            "headers": sorted(case["provenance"].get("headers", {}))}


@pytest.mark.parametrize("client", list(clients.RECORDERS))
def test_the_committed_recordings_match_what_the_client_sends(client, tmp_path):
    try:
        clients.RECORDERS[client]()  # installs the pinned client into the user's cache when missing
    except clients.InstallError as error:
        pytest.fail(f"cannot re-record {client}: {error}", pytrace=False)
    with RecordingServer(tmp_path, report=[].append) as server:
        clients.run(server.base_url, (client,), {**os.environ, "LMCONFORM_API_KEY": CANARY})

    fresh = cases_in(tmp_path)
    committed = {f"{api_of_file(path)}/{path.name}": json.loads(path.read_text()) for path in case_files()
                 if path.name.startswith(f"recorded-{client}-")}
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or CANARY not in path.read_text(), path
    versions = f"committed: {next(iter(committed.values()))['provenance']['client']}; " \
               f"now: {next(iter(fresh.values()))['provenance']['client']}" if committed and fresh else ""
    advice = (f"to re-record ({versions}): remove lmconform/apis/*/cases/recorded-{client}-*.json, run `lmconform "
              f"record --listen 8765 --to lmconform/apis` and `python -m tools.recorders.clients run "
              f"http://127.0.0.1:8765 {client}`")
    assert sorted(fresh) == sorted(committed), advice
    for name, case in committed.items():
        expected, got = (json.dumps(case_shape(c), indent=1).splitlines() for c in (case, fresh[name]))
        diff = "\n".join(difflib.unified_diff(expected, got, f"committed {name}", "sent now", lineterm=""))
        assert not diff, f"{client} now sends another request shape than {name}; {advice}\n{diff}"
