"""`lmconform check [URL]`, as a user who has never read pytest's documentation runs it: the headline and three
files, the failing check named first, a progress line on a terminal only, and a bad address, key or model ending
in one line that says what to do, with exit status 2 or 3 and no traceback."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import budget
import httpx
import processes
import pytest
from bridge_pipe import closed_port
from faulty_proxies import running_app
from handlers import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lmconform.check_command.progress import Progress
from lmconform.check_command.survey import Model, Survey, _native_model, pick_model
from lmconform.cli import main

ROOT = Path(__file__).resolve().parent.parent
# How long a test waits for lines a thread writes every millisecond, on a busy machine before it gives up.
LINES_AWAITED_S = 60
QUICK = ("--checks", "chat.stream.tool_call.index_zero", "--checks", "client.void.tool_call_parsed")  # a few checks, a headline with a client in it


def check(*args: str, cwd: Path, cases: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    # The command has no option for the generated requests' number nor for the cases played (it is for people who do
    # not write pytest); the suite it runs reads PYTEST_ADDOPTS, which carries make check's smaller budget: fewer
    # generated requests, and the sample of cases with those the test reads.
    env = {**os.environ, "PYTEST_ADDOPTS": " ".join((*budget.fuzz_options(), *budget.case_options(*cases)))}
    return processes.run([sys.executable, "-m", "lmconform.cli", "check", *args], cwd=cwd, timeout=600, env=env)


@pytest.mark.agents
def test_every_agent_against_the_embedded_server_works(tmp_path):
    # The embedded server takes Codex's tool types (namespace, custom, web_search) as OpenAI does, so Codex works as
    # a user runs it; what LM Studio's dialect makes of it (it breaks, why, the way round) is tests/test_causes.py's,
    # against the variant responses-function-tools-only.
    done = check("--agents", "all", "--checks", "agent.*", "--checks", "http.status.*", "--out", "out", cwd=tmp_path,
                 cases=("*/agent-*",))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout[done.stdout.index("Will it work?"):]
    assert re.search(r"Claude Code [0-9.]+ · Anthropic Messages\s+✓ works \(run live\)", lines)
    assert re.search(r"opencode [0-9.]+ · Chat completions\s+✓ works \(run live\)", lines)
    assert re.search(r"Codex CLI [0-9.]+ · Responses\s+✓ works \(run live\)", lines)


def test_the_embedded_server_gets_the_headline_and_three_files_with_no_progress_line_in_a_pipe(tmp_path):
    done = check(*QUICK, "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "embedded reference server" in done.stdout and "Void · Chat completions" in done.stdout
    assert "✓ works" in done.stdout and "Verdicts:" in done.stdout and "\r" not in done.stdout
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["junit.xml", "report.html", "results.json"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]  # nothing else left in the user's folder
    record = json.loads((tmp_path / "out" / "results.json").read_text())
    assert record["lmconform"] and any("first_token_s" in figures for figures in record["timing"].values())


def test_hypothesis_keeps_its_tables_in_the_user_s_cache_not_in_out(tmp_path):
    """Generated requests draw characters by Unicode category, and hypothesis writes its table of them where its
    storage directory is: that was a `.hypothesis/` folder in --out, beside the report. The command puts it in the
    user's cache. In a process of its own, started as users start it: a process settles its storage directory once,
    and a forked one has its parent's."""
    env = {**{name: value for name, value in os.environ.items() if name != "HYPOTHESIS_STORAGE_DIRECTORY"},
           "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTEST_ADDOPTS": " ".join((*budget.fuzz_options(), "--cases", "chat/fuzz-requests-valid"))}
    done = subprocess.run([sys.executable, "-m", "lmconform.cli", "check", "--checks",
                           "http.status.success_for_valid_request", "--out", "out"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["junit.xml", "report.html", "results.json"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cache", "out"]
    assert list((tmp_path / "cache" / "lmconform" / "hypothesis").rglob("charmap.json.gz"))


def test_the_stream_idle_limit_is_the_one_given(server, tmp_path):
    # prefill-comment-keepalives holds the long prompt's first event back for seconds: within Codex's 300 s, past 1 s.
    silence = ("--checks", "responses.stream.silence_within_idle_limit")
    url = f"{server.base_url}/faults/prefill-comment-keepalives"
    within = check(url, *silence, "--out", str(tmp_path / "default"), cwd=tmp_path, cases=("responses/long-prompt-stream",))
    assert within.returncode == 0, within.stdout[-2000:] + within.stderr[-2000:]
    past = check(url, *silence, "--stream-idle-limit", "1", "--out", str(tmp_path / "one"), cwd=tmp_path,
                 cases=("responses/long-prompt-stream",))
    assert past.returncode == 1 and "responses.stream.silence_within_idle_limit" in past.stdout, past.stdout[-2000:]


def test_a_faulty_server_exits_1_and_its_check_is_named_first(server, tmp_path):
    done = check(f"{server.base_url}/faults/tool-index-one", *QUICK, "--out", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "lmconform's reference server" in done.stdout
    first = done.stdout.split("Findings:", 1)[1].split("[", 1)[1].split("]", 1)[0]
    assert first == "chat.stream.tool_call.index_zero"
    assert "✗ breaks" in done.stdout


def test_the_apis_a_server_does_not_offer_are_named_and_left_out(server, tmp_path):
    """A server with chat completions but no Responses, Anthropic Messages or LM Studio native chat (llama-cpp-python,
    a plain proxy): the survey says so, and the run plays only what is there."""
    upstream = httpx.Client(base_url=server.base_url, timeout=60)

    async def forward(request: Request) -> Response:
        if request.url.path in ("/v1/responses", "/v1/messages", "/api/v1/chat"):
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        answer = upstream.request(request.method, request.url.path, content=await request.body(),
                                  headers={"content-type": "application/json"})
        return Response(answer.content, status_code=answer.status_code,
                        media_type=answer.headers.get("content-type"))

    app = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])
    with running_app(app, "chat-only") as url:
        done = check(url, "--checks", "schema.*", "--out", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert ("it does not offer Responses (HTTP 404 to POST /v1/responses); Anthropic Messages (HTTP 404 to POST "
            "/v1/messages); LM Studio native chat (HTTP 404 to POST /api/v1/chat): those cases are left out") \
        in done.stdout
    played = {row["case"].split("/")[0] for row in json.loads((tmp_path / "results.json").read_text())["results"]}
    assert "chat" in played and not played & {"responses", "messages", "native_chat"}


def test_a_proxy_and_its_upstream_are_the_gates_short_form(server, tmp_path):
    done = check(server.base_url, "--upstream", server.base_url, "--checks", "proxy.*", "--out", str(tmp_path),
                 cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads((tmp_path / "results.json").read_text())["results"]
    assert rows and all(row["check"].startswith("proxy.") for row in rows)
    # A "proxy" that refuses what its upstream answers (json_object formats), in front of the clean server: what it
    # changes fails the gate.
    changed = check(f"{server.base_url}/faults/json-object-rejected", "--upstream", server.base_url, "--checks",
                    "proxy.*", "--out", str(tmp_path / "changed"), cwd=tmp_path,
                    cases=budget.shown_by("json-object-rejected"))
    assert changed.returncode == 1, changed.stdout[-2000:] + changed.stderr[-2000:]
    assert "[proxy.diff.status_preserved]" in changed.stdout


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

    with serving(Handler) as url:
        yield url


PAGE = b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>"
REFUSAL = b'{"error": {"message": "Invalid API key"}}'


@pytest.mark.parametrize("answer, args, status, message", [
    (None, ["localhost:1234"], 2, "URL 'localhost:1234' is not a server address: did you mean http://localhost:1234?"),
    (None, ["ftp://localhost:1234"], 2, "URL 'ftp://localhost:1234' is not a server address: give one such as http://"),
    (None, ["{closed}"], 3, "nothing answers at http://127.0.0.1:"),
    ((200, PAGE, "text/html"), ["{url}"], 3, "answers with a web page, not an OpenAI-compatible API"),
    ((401, REFUSAL, "application/json"), ["{url}"], 2, "wants an API key (HTTP 401 to GET /v1/models): pass"),
    ((403, REFUSAL, "application/json"), ["{url}", "--api-key", "sk-wrong-key-1234"], 2,
     "refused the API key (HTTP 403"),
    ("reference", ["{url}", "--model", "qwen3-4b"], 2, "lists no model 'qwen3-4b': pass one it lists with --model"),
    (None, ["--checks", "chat.nope.*"], 2, "no check id matches 'chat.nope.*'"),
    (None, ["--reference-fault", "no-such-fault"], 2,
     "--reference-fault: unknown fault 'no-such-fault'; `lmconform faults` lists them\n"),
    (None, ["--reference-fault", "tool-index-on"], 2, "unknown fault 'tool-index-on' (did you mean 'tool-index-one'?)"),
    (None, ["--agents", "cursor"], 2, "--agents takes agents among claude-code, codex, opencode"),
    (None, ["--agents", "codex,codex@latest"], 2, "--agents names codex twice: a run runs one version of each agent"),
    (None, ["http://127.0.0.1:99999"], 2, "URL 'http://127.0.0.1:99999' is not a server address"),
    (None, ["--read-timeout", "0"], 2, "--read-timeout takes a number above 0 and at most 86400, not '0'"),
    (None, ["--read-timeout", "inf"], 2, "--read-timeout takes a number above 0 and at most 86400, not 'inf'"),
    (None, ["--repeat", "0"], 2, "--repeat takes a whole number of at least 1, not '0'"),
    (None, ["--stream-idle-limit", "0"], 2, "--stream-idle-limit takes a number above 0 and at most 86400, not '0'"),
    (None, ["--stream-idle-limit", "5m"], 2, "--stream-idle-limit takes a number above 0 and at most 86400, not '5m'"),
    ((404, b'{"detail": "Not Found"}', "application/json"), ["{url}"], 3,
     "answers GET /v1/models with no list of models (HTTP 404 application/json"),
    ((500, b"Internal Server Error", "text/plain"), ["{url}"], 3, "with no list of models (HTTP 500 text/plain"),
    ((200, b"ok", "text/plain"), ["{url}"], 3, "this is not an OpenAI-compatible API's address"),
    ("silent", ["{url}", "--read-timeout", "0.5"], 3,
     "did not answer GET /v1/models (no bytes for 0.5 s (read timeout) after nothing): check the address, or raise "
     "--read-timeout"),
    (b"\x00\x01 not http\r\n\r\n", ["{url}"], 3, "did not answer GET /v1/models with HTTP (RemoteProtocolError: "),
])
def test_bad_input_is_one_line_saying_what_to_do(server, tmp_path, capsys, answer, args, status, message):
    with _serving(answer) as url:
        url = server.base_url if answer == "reference" else url
        args = [arg.format(url=url, closed=f"http://127.0.0.1:{closed_port()}") for arg in args]
        assert main(["check", *args, "--out", str(tmp_path)]) == status
    said = capsys.readouterr()
    assert said.err.count("\n") == 1 and message in said.err and "Traceback" not in said.err + said.out
    assert "sk-wrong-key-1234" not in said.err + said.out


def test_an_agent_asked_for_and_not_installed_ends_the_run_saying_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LMCONFORM_AGENTS_CACHE", str(tmp_path / "no-agents"))
    assert main(["check", "--agents", "codex", "--out", str(tmp_path / "out")]) == 2
    said = capsys.readouterr()
    assert said.err.startswith("lmconform check: --agents codex: Codex CLI is not installed: `lmconform agents "
                               "install` installs it") and said.err.count("\n") == 1 and not said.out


def _serving(answer):
    if isinstance(answer, tuple):
        return answering(*answer)
    if isinstance(answer, bytes) or answer == "silent":
        return _raw(answer if isinstance(answer, bytes) else None)
    return _nothing()


@contextmanager
def _nothing() -> Iterator[str]:
    yield ""


@contextmanager
def _raw(reply: bytes | None) -> Iterator[str]:
    """A listener that sends `reply` (bytes that need not be HTTP) to each request, or holds every connection
    unanswered (None)."""
    held = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)

        def serve() -> None:
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                held.append(connection)
                if reply is not None:
                    connection.recv(65536)
                    connection.sendall(reply)
                    connection.close()

        threading.Thread(target=serve, daemon=True).start()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    for connection in held:
        connection.close()


def judge_two_checks_of_a_case(progress: Progress) -> None:
    """What a run shows its progress with: three tests, two judging one case, the third another; the first two
    judged, each a finding."""
    case = type("Case", (), {"id": "chat/void-weather-tool"})()
    items = [type("Item", (), {"nodeid": f"test_apis.py::test_chat[void-weather-tool:chat.{check}]",
                               "callspec": type("Spec", (), {"params": {"case": case}})()})() for check in "xy"]
    items.append(type("Item", (), {"nodeid": "test_apis.py::test_chat[other:chat.x]"})())
    progress.pytest_collection_finish(type("Session", (), {"items": items})())
    for item in items[:2]:
        progress.pytest_runtest_logstart(item.nodeid)
        report = type("Report", (), {"when": "call", "passed": False, "nodeid": item.nodeid,
                                     "lmconform_verdict": {"outcome": "FAILED"}})()
        progress.pytest_runtest_logreport(report)


def test_the_progress_line_counts_cases_and_findings_rewritten_in_place_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown = Progress(Terminal(), log_interval_s=0.001)
    judge_two_checks_of_a_case(shown)
    shown.finish()
    drawn = shown.stream.getvalue()
    assert "[0/2 cases] 0 findings · chat/void-weather-tool" in drawn
    assert "[0/2 cases] 1 finding · chat/void-weather-tool" in drawn  # one check of the case judged, one to go
    assert "[1/2 cases] 2 findings · chat/void-weather-tool" in drawn
    assert "\n" not in drawn and "lmconform check:" not in drawn  # no log line on a terminal


def test_in_a_log_the_progress_line_is_written_whole_every_interval_until_the_run_ends(tmp_path):
    """A CI log shows no carriage return: every log_interval_s (10 s in a run; here a millisecond, and the test
    waits for the lines, not for time) the line is written whole, with the cases done, the findings so far and the
    case being played, while a case is being played as well as between cases. pytest points the output's descriptor
    at a file of its own while a test runs; the lines reach the log all the same."""
    log = tmp_path / "log"
    with open(log, "w", encoding="utf-8") as stdout:
        progress = Progress(stdout, log_interval_s=0.001)
        with open(os.devnull, "w") as capture:
            os.dup2(capture.fileno(), stdout.fileno())  # as pytest's capture does to descriptor 1 during a test
        judge_two_checks_of_a_case(progress)
        last = "lmconform check: [1/2 cases] 2 findings · chat/void-weather-tool\n"
        given_up = time.monotonic() + LINES_AWAITED_S
        while log.read_text(encoding="utf-8").count(last) < 2:  # the run stays on its last case: the line still comes
            assert progress.logger is not None and progress.logger.is_alive() and time.monotonic() < given_up
            threading.Event().wait(0.001)
        progress.finish()
    assert not progress.logger.is_alive()  # nothing written after the run's end, when the findings are printed
    written = log.read_text(encoding="utf-8")
    assert "\r" not in written and written.endswith(last)
    for line in written.splitlines():  # the lines written while the cases were being judged
        assert re.fullmatch(r"lmconform check: \[[01]/2 cases\] \d findings? · (starting|chat/void-weather-tool)", line)


def test_a_log_whose_reader_went_away_ends_the_lines_quietly(monkeypatch):
    """`lmconform check | head -3`: the reader leaves while the run goes on; the lines stop, with no traceback."""
    raised = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    reading, writing = os.pipe()
    os.close(reading)
    with open(writing, "w", encoding="utf-8") as stdout:
        progress = Progress(stdout, log_interval_s=0.001)
        judge_two_checks_of_a_case(progress)
        given_up = time.monotonic() + LINES_AWAITED_S
        while progress.logger.is_alive():  # its first line meets the closed pipe
            assert time.monotonic() < given_up
            threading.Event().wait(0.001)
        progress.finish()
    assert raised == []


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


def test_a_case_file_that_breaks_its_schema_is_named_in_one_line(tmp_path, capsys, monkeypatch):
    """A suite that cannot load (a case file edited by hand, say) is a usage error said in one line, not a silent 2:
    the command's own output replaces pytest's, which would have shown the collection error."""
    from lmconform.cases import CaseError
    from lmconform.run import plan

    def broken(api: str):
        raise CaseError(f"{api}/cases/mine.json: 'x' is too long at description")

    monkeypatch.setattr(plan, "load_cases", broken)
    assert main(["check", "--checks", "chat.stream.tool_call.index_zero", "--out", str(tmp_path)]) == 2
    said = capsys.readouterr()
    assert said.err.count("\n") == 1 and "Traceback" not in said.err + said.out
    assert "the suites could not be loaded: bad case file: chat/cases/mine.json: 'x' is too long" in said.err


def test_output_read_in_part_ends_quietly():
    """`lmconform faults | head -1`: the reader leaves, and the command ends without a traceback."""
    listed = subprocess.run(f"{sys.executable} -m lmconform.cli faults | head -1", shell=True, capture_output=True,
                            text=True, timeout=120)
    assert listed.stdout.count("\n") == 1 and "Traceback" not in listed.stderr and "BrokenPipe" not in listed.stderr
