"""Shape snapshots: the shape function on hand-made answers, the suite writing and comparing snapshots of the
reference server in a subprocess, and `lmconform snapshots diff` between two folders."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import budget
import processes
import pytest
from test_plugin import suite_in_this_process

from lmconform.snapshots import shape_of, snapshot_folder
from lmconform.snapshots.diff import register
from lmconform.snapshots.extension import SNAPSHOT_DIR_ENV
from lmconform.target import Target
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

ROOT = Path(__file__).resolve().parent.parent
CANARY_KEY = "sk-canary-7d3e91c04b"
# The clean shapes are written by a module fixture that runs the suite: on one worker, so that no other writes them
# again.
pytestmark = pytest.mark.xdist_group("snapshots")


def answer(body: bytes, content_type: str = "application/json", status: int = 200, reads: int = 1) -> HttpExchange:
    size = max(1, -(-len(body) // reads))
    chunks = [BodyChunk(0.0, body[start:start + size]) for start in range(0, len(body), size)]
    return HttpExchange(HttpRequest("POST", "http://127.0.0.1:1/v1/chat/completions", {}), status=status,
                        headers={"content-type": content_type}, chunks=chunks)


def sse(*events: str) -> bytes:
    return "".join(f"{event}\n\n" for event in events).encode()


def chunk(delta: dict, finish_reason: str | None = None, **extra) -> str:
    body = {"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1795324708, "model": "qwen3",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra}
    return "data: " + json.dumps(body)


TEXT_STREAM = sse(chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}), chunk({"content": "lo"}),
                  chunk({"content": "!"}), chunk({}, "stop"), "data: [DONE]")


def test_a_stream_is_its_event_shapes_with_runs_collapsed_and_values_masked():
    shape = shape_of(answer(TEXT_STREAM, "text/event-stream; charset=utf-8"), "chat")
    assert shape["status"] == 200 and shape["content_type"] == "text/event-stream"
    first, deltas, last, done = shape["events"]
    assert first["data"]["choices"] == [{"delta": {"content": "string", "role": "assistant"},
                                         "finish_reason": "null", "index": "integer"}]
    assert first["data"]["object"] == "chat.completion.chunk"
    assert first["data"]["id"] == "string" and first["data"]["created"] == "integer"
    assert deltas["repeat"] == "+" and deltas["data"]["choices"][0]["delta"] == {"content": "string"}
    assert "repeat" not in first and last["data"]["choices"][0]["finish_reason"] == "stop"
    assert done == {"data": "[DONE]"}


def test_the_shape_does_not_depend_on_values_or_on_how_the_bytes_arrived():
    other = (TEXT_STREAM.replace(b"chatcmpl-123", b"chatcmpl-987654").replace(b"1795324708", b"1")
             .replace(b'"Hel"', b'"Bonjour tout le monde"'))
    shapes = [shape_of(answer(body, "text/event-stream", reads=reads), "chat")
              for body, reads in ((TEXT_STREAM, 1), (other, 7))]
    assert shapes[0] == shapes[1]
    assert json.dumps(shapes[0]) == json.dumps(shapes[1])


def test_responses_events_keep_their_names_and_types():
    body = sse('event: response.created\ndata: {"type": "response.created", "sequence_number": 0, '
               '"response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}',
               'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "Hi"}',
               'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": " there"}')
    created, deltas = shape_of(answer(body, "text/event-stream"), "responses")["events"]
    assert created["event"] == "response.created" and created["data"]["type"] == "response.created"
    assert created["data"]["response"] == {"id": "string", "object": "response", "status": "in_progress",
                                           "output": []}
    assert deltas == {"event": "response.output_text.delta", "repeat": "+",
                      "data": {"type": "response.output_text.delta", "delta": "string"}}


def test_framing_issues_and_odd_data_are_part_of_the_shape_and_keep_alive_comments_are_not():
    body = sse("data: not json", "data:") + b'data: {"a": 1}'
    shape = shape_of(answer(body, "text/event-stream"), "chat")
    assert shape["events"] == [{"data": "not JSON"}, {"data": "empty"}]
    assert shape["framing"] == ["unterminated_event"]
    # A server under load sends a keep-alive where an idle one does not: the shape must not tell them apart.
    assert shape_of(answer(b": ping\n\n" + body + b"\n: ping", "text/event-stream"), "chat") == shape


def test_an_error_body_keeps_what_clients_branch_on():
    body = {"error": {"message": "Invalid 'tools[0]'", "type": "invalid_request_error", "param": "tools",
                      "code": "invalid_value"}}
    shape = shape_of(answer(json.dumps(body).encode(), status=400), "chat")
    assert shape == {"status": 400, "content_type": "application/json",
                     "body": {"error": {"message": "string", "type": "invalid_request_error", "param": "tools",
                                        "code": "invalid_value"}}}
    bare = shape_of(answer(b'{"error": "Invalid tool_choice type: \'object\'"}', status=400), "chat")
    assert bare["body"] == {"error": "string"}


def test_list_items_merge_into_their_distinct_shapes_in_order():
    body = {"object": "list", "data": [{"id": "a", "object": "model"}, {"id": "b", "object": "model"},
                                       {"id": "c", "object": "model", "loaded": True}]}
    shape = shape_of(answer(json.dumps(body).encode()), "models")
    assert shape["body"]["data"] == [{"id": "string", "object": "model"},
                                     {"id": "string", "loaded": "boolean", "object": "model"}]


def test_bodies_that_are_not_json_and_answers_that_never_came():
    assert shape_of(answer(b"<html>Not Found</html>", "text/html", 404), "chat")["body"] == "not JSON"
    assert shape_of(answer(b"", "", 204), "chat") == {"status": 204, "content_type": None, "body": "empty"}
    timeout = answer(sse(chunk({"role": "assistant"})), "text/event-stream")
    timeout.error, timeout.error_kind = "no bytes for 30 s", "timeout"
    assert shape_of(timeout, "chat")["error"] == "timeout"


def test_the_snapshot_folder_is_one_safe_path_component_per_server_and_version(tmp_path):
    assert snapshot_folder(Target("http://h", label="reference", server_version="0.3.29"), tmp_path) == \
        tmp_path / "reference-0.3.29"
    assert snapshot_folder(Target("http://h", label="localhost:1234"), tmp_path).name == "localhost-1234-unknown"
    assert snapshot_folder(Target("http://h", label="LM Studio/../x", server_version="../1"), tmp_path).parent == \
        tmp_path


# The suite in a subprocess, as users run it; in `make check` on the sample of cases tests/budget.py picks, with
# the two the tests read.
READ = ("chat/void-weather-tool", "chat/text-stream")
SHAPED = budget.suite_cases(*READ)  # None: every case


def run_shapes(snapshots: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", str(ROOT / "suites" / "test_shapes.py"), "-p", "no:cacheprovider",
               "-q", "-rfs", *budget.case_options(*READ), *args]
    env = {**os.environ, SNAPSHOT_DIR_ENV: str(snapshots), "LMCONFORM_API_KEY": CANARY_KEY}
    return processes.run(command, cwd=ROOT, timeout=300, env=env)


def files(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*.json"))}


def diff_command(*args: str) -> int:
    parser = argparse.ArgumentParser(prog="lmconform")
    register(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(["snapshots", "diff", *args])
    return parsed.handler(parsed)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """Snapshots of the clean reference server as version 0.3.29."""
    root = tmp_path_factory.mktemp("snapshots")
    written = run_shapes(root, "--server-version", "0.3.29", "--snapshot-update")
    assert written.returncode == 0, written.stdout[-3000:]
    return root


def test_every_case_gets_one_readable_snapshot_with_no_key_in_it(recorded):
    from lmconform.api_table import APIS
    from lmconform.cases import load_cases

    stored = files(recorded / "reference-0.3.29")
    assert set(stored) == {f"{case.id}.json" for api in APIS for case in load_cases(api)
                           if not case.source and case.websocket is None and (SHAPED is None or case.id in SHAPED)}
    text = stored["chat/void-weather-tool.json"].decode()
    assert text.startswith('{\n  "content_type": "text/event-stream",\n') and text.endswith("}\n")
    assert json.loads(text)["events"][-1] == {"data": "[DONE]"}
    assert not [name for name, data in stored.items() if CANARY_KEY.encode() in data]


def test_the_same_shapes_pass_without_update(recorded):
    # A second run of the same server: a volatile value that leaked into a shape (an id, a timestamp) fails here.
    compared = run_shapes(recorded, "--server-version", "0.3.29")
    assert compared.returncode == 0, compared.stdout[-3000:]
    assert "skipped" not in compared.stdout


def test_a_changed_shape_fails_with_a_diff_naming_the_case(recorded):
    # Two of the cases the fault changes: what the failure says does not need the others.
    compared = run_shapes(recorded, "--server-version", "0.3.29", "--reference-fault", "role-missing",
                          "-k", "chat/text-stream or chat/void-weather-tool")
    assert compared.returncode == 1 and "2 failed" in compared.stdout
    assert "chat/text-stream: the shape of the answer differs from reference-0.3.29/chat/text-stream.json" in \
        compared.stdout
    assert '-              "role": "assistant"' in compared.stdout
    assert "FAILED suites/test_shapes.py::test_shape[chat/void-weather-tool]" in compared.stdout


def test_shapes_are_left_out_unless_asked_for(tmp_path, capsys, monkeypatch):
    # Left out, not skipped: a report of the run has no line for them. With nothing else selected, pytest says
    # that no test ran (exit status 5), and why. Decided before the run starts: in this process, as nothing is played.
    monkeypatch.setenv(SNAPSHOT_DIR_ENV, str(tmp_path))
    shapes = ROOT / "suites" / "test_shapes.py"
    status, plain = suite_in_this_process(capsys, suites=shapes)
    assert status == 5 and "compared with --server-version V" in plain
    status, unrecorded = suite_in_this_process(capsys, "--server-version", "9.9.9", suites=shapes)
    assert status == 5 and f"none at {tmp_path / 'reference-9.9.9'}" in unrecorded
    assert " passed" not in plain + unrecorded and not list(tmp_path.iterdir())


def test_snapshots_diff_names_exactly_the_cases_a_fault_changed(recorded, capsys):
    faulty = run_shapes(recorded, "--server-version", "0.3.30", "--snapshot-update", "--reference-fault",
                        "role-missing")
    assert faulty.returncode == 0, faulty.stdout[-3000:]
    clean = recorded / "reference-0.3.29"
    streamed_chat = {path.relative_to(clean).with_suffix("").as_posix() for path in (clean / "chat").glob("*.json")
                     if json.loads(path.read_text())["content_type"] == "text/event-stream"}
    capsys.readouterr()
    assert diff_command(str(clean), str(recorded / "reference-0.3.30")) == 1
    output = capsys.readouterr().out
    changed = {line.split(" ", 1)[1] for line in output.splitlines() if line.startswith("changed ")}
    assert changed == streamed_chat and "added " not in output and "removed " not in output
    assert "--- reference-0.3.29/chat/text-stream.json\n+++ reference-0.3.30/chat/text-stream.json" in output


def test_snapshots_diff_reports_added_and_removed_and_is_silent_when_identical(tmp_path, capsys):
    old, new = tmp_path / "lmstudio-0.3.28", tmp_path / "lmstudio-0.3.29"
    for folder, slug in ((old, "gone"), (new, "new")):
        (folder / "chat").mkdir(parents=True)
        (folder / "chat" / f"{slug}.json").write_text("{}\n")
        (folder / "chat" / "same.json").write_text('{\n  "status": 200\n}\n')
    assert diff_command(str(old), str(new)) == 1
    assert capsys.readouterr().out == "removed chat/gone\nadded chat/new\n"
    assert diff_command(str(new), str(new)) == 0
    assert capsys.readouterr().out == ""
    assert diff_command(str(old), str(tmp_path / "missing")) == 2
    streams = capsys.readouterr()
    assert streams.out == "" and streams.err == f"lmconform snapshots diff: no snapshot folder at {tmp_path}/missing\n"


def test_a_tool_call_the_model_chose_is_recognised_in_the_shape_of_every_api():
    from tools.targets.published import calls_a_tool

    chat = {"choices": [{"message": {"tool_calls": [{"type": "function"}]}}]}
    responses = {"output": [{"type": "function_call"}]}
    messages = [{"event": "content_block_start", "data": {"content_block": {"type": "tool_use", "input": {}}}}]
    text = {"content": [{"type": "text", "text": "string"}]}
    assert all(calls_a_tool(json.dumps(shape)) for shape in (chat, responses, messages))
    assert not calls_a_tool(json.dumps(text))


def test_an_answer_the_model_let_run_to_the_token_limit_is_its_choice_in_every_api():
    from tools.targets.published import cut_at_the_token_limit, model_choices

    chat = {"choices": [{"finish_reason": "length"}]}
    responses = [{"event": "response.incomplete", "data": {"response": {"status": "incomplete"}}}]
    messages = {"content": [{"type": "text"}, {"type": "tool_use"}], "stop_reason": "max_tokens"}
    ended = {"content": [{"type": "text"}, {"type": "tool_use"}], "stop_reason": "tool_use"}
    assert all(cut_at_the_token_limit(json.dumps(shape)) for shape in (chat, responses, messages))
    assert not cut_at_the_token_limit(json.dumps(ended))
    # llama-server, the same request in two runs: a tool call, then the limit in one; the call and its end in the other.
    assert model_choices(json.dumps(messages)) != model_choices(json.dumps(ended))
    assert model_choices(json.dumps({**ended, "id": "string"})) == model_choices(json.dumps(ended))
