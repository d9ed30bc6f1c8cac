"""`lmconform check [URL]`, as a user who has never read pytest's documentation runs it: the headline and three
files, the failing check named first, a progress line on a terminal only, and a bad address, key or model ending
in one line that says what to do, with exit status 2 or 3 and no traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from bridge_pipe import closed_port

from lmconform.check_command.progress import Progress
from lmconform.check_command.survey import Model, Survey, _native_model, pick_model
from lmconform.cli import main

ROOT = Path(__file__).resolve().parent.parent
QUICK = ("--checks", "chat.stream.tool_call.index_zero", "--checks", "client.void.tool_call_parsed")  # a few checks, a headline with a client in it


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lmconform.cli", "check", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_the_embedded_server_gets_the_headline_and_three_files_with_no_progress_line_in_a_pipe(tmp_path):
    done = check(*QUICK, "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "embedded reference server" in done.stdout and "Void · Chat completions" in done.stdout
    assert "✓ works" in done.stdout and "Verdicts:" in done.stdout and "\r" not in done.stdout
    assert sorted(path.name for path in (tmp_path / "out").iterdir() if not path.name.startswith(".")) == \
        ["junit.xml", "report.html", "results.json"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]  # nothing else left in the user's folder
    assert json.loads((tmp_path / "out" / "results.json").read_text())["lmconform"]


def test_a_faulty_server_exits_1_and_its_check_is_named_first(server, tmp_path):
    done = check(f"{server.base_url}/faults/tool-index-one", *QUICK, "--out", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "lmconform's reference server" in done.stdout
    first = done.stdout.split("[", 1)[1].split("]", 1)[0]
    assert first == "chat.stream.tool_call.index_zero"
    assert "✗ breaks" in done.stdout or "◐ partly" in done.stdout


def test_a_proxy_and_its_upstream_are_the_gates_short_form(server, tmp_path):
    done = check(server.base_url, "--upstream", server.base_url, "--checks", "proxy.*", "--out", str(tmp_path),
                 cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads((tmp_path / "results.json").read_text())["results"]
    assert rows and all(row["check"].startswith("proxy.") for row in rows)


@contextmanager
def answering(status: int, body: bytes, content_type: str) -> Iterator[str]:
    """A server that answers every GET with `status` and `body`."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


PAGE = b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>"
REFUSAL = b'{"error": {"message": "Invalid API key"}}'


@pytest.mark.parametrize("answer, args, status, message", [
    (None, ["localhost:1234"], 2, "URL 'localhost:1234' is not a server address: give one such as http://"),
    (None, ["{closed}"], 3, "nothing answers at http://127.0.0.1:"),
    ((200, PAGE, "text/html"), ["{url}"], 3, "answers with a web page, not an OpenAI-compatible API"),
    ((401, REFUSAL, "application/json"), ["{url}"], 2, "wants an API key (HTTP 401 to GET /v1/models): pass"),
    ((403, REFUSAL, "application/json"), ["{url}", "--api-key", "sk-wrong-key-1234"], 2,
     "refused the API key (HTTP 403"),
    ("reference", ["{url}", "--model", "qwen3-4b"], 2, "lists no model 'qwen3-4b': pass one it lists with --model"),
    (None, ["--checks", "chat.nope.*"], 2, "no check id matches 'chat.nope.*'"),
    (None, ["--reference-fault", "no-such-fault"], 2, "--reference-fault: unknown fault 'no-such-fault'"),
    (None, ["--agents", "cursor"], 2, "--agents takes agents among claude-code, codex, opencode"),
])
def test_bad_input_is_one_line_saying_what_to_do(server, tmp_path, capsys, answer, args, status, message):
    with (answering(*answer) if isinstance(answer, tuple) else _nothing()) as url:
        url = server.base_url if answer == "reference" else url
        args = [arg.format(url=url, closed=f"http://127.0.0.1:{closed_port()}") for arg in args]
        assert main(["check", *args, "--out", str(tmp_path)]) == status
    said = capsys.readouterr()
    assert said.err.count("\n") == 1 and message in said.err and "Traceback" not in said.err + said.out
    assert "sk-wrong-key-1234" not in said.err + said.out


@contextmanager
def _nothing() -> Iterator[str]:
    yield ""


def test_the_progress_line_counts_pairs_and_findings_on_a_terminal_only():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown, piped = Progress(Terminal()), Progress(io.StringIO())
    for progress in (shown, piped):
        progress.total = 2
        progress.pytest_runtest_logstart("lmconform/suites/test_apis.py::test_chat[void-weather-tool:chat.x]")
        report = type("Report", (), {"when": "call", "passed": False,
                                     "lmconform_verdict": {"outcome": "FAILED"}})()
        progress.pytest_runtest_logreport(report)
    assert "[1/2] 1 finding · chat/void-weather-tool" in shown.stream.getvalue()
    assert piped.stream.getvalue() == ""


def test_the_model_tested_is_one_that_can_call_tools_where_lm_studio_says_which():
    listed = [_native_model({"key": "nomic-embed", "type": "embedding"}),
              _native_model({"key": "gemma-3", "type": "llm", "loaded_instances": [{"id": "gemma-3"}],
                             "capabilities": {"trained_for_tool_use": False}}),
              _native_model({"id": "qwen3-4b", "type": "llm", "state": "not-loaded", "capabilities": ["tool_use"]})]
    assert [model.tools for model in listed] == [False, False, True] and listed[1].loaded
    assert pick_model(listed) == "qwen3-4b"
    assert pick_model([Model("a"), Model("b")]) == "a"
    found = Survey((Model("qwen3-4b", tools=True), Model("b"), Model("c")), "qwen3-4b",
                   {"kind": "lmstudio", "version_bracket": ">=0.4.0", "engine": "llama.cpp"})
    assert found.sentence == "LM Studio 0.4.0 or later, engine llama.cpp, 3 models; the model qwen3-4b can call tools"
    assert found.profile == "lmstudio@0.4.0"
