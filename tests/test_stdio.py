"""The stdio transport: a bridge is a process, and whatever it does (prints garbage, dies mid-turn, never answers,
floods its stdout, ignores SIGTERM, leaves children behind) each case ends with a verdict inside the read timeout
and no process is left behind. Framing is read as a client reads it, line by line, and every error is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lmconform.cases import load_cases
from lmconform.run import run_suite
from lmconform.run.plan import embedded_bridge
from lmconform.run.play import play
from lmconform.target import Target, parse_command, shown_command
from lmconform.vocabulary import Outcome
from lmconform.wire import process as process_module
from lmconform.wire.jsonlines import STDOUT, JsonLines, Line
from lmconform.wire.stdio import StdioTransport

# The hostile bridges' runs are one module fixture: on one worker, so that no other worker waits them out again.
pytestmark = [pytest.mark.xdist_group("stdio"), pytest.mark.waits]

# The read timeout is what some hostile bridges are meant to run into (they never answer): short, since each case
# waits it out. Those whose own act ends the case (dying, flooding) get a limit generous enough for a loaded machine
# to start them, which they never reach.
WAITED_OUT = 0.25
AWAITED = 60.0


def python(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


HOSTILE = {
    # Reads each message and answers with a line that is not JSON.
    "garbage": python("import sys\nfor line in sys.stdin:\n    print('lmconform? never heard of it', flush=True)"),
    # Sends one part of the first chat turn, then dies with status 3.
    "exits-mid-turn": python(
        "import sys, json\nline = sys.stdin.readline()\nrequest = json.loads(line)\n"
        "print(json.dumps({'jsonrpc': '2.0', 'method': 'lm/responsePart', 'params': {'requestId': request['id'], "
        "'part': {'type': 'text', 'value': 'Hel'}}}), flush=True)\nsys.exit(3)"),
    # Reads everything, answers nothing, and ignores SIGTERM and the end of its stdin.
    "never-answers": python("import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                            "sys.stdin.read()\ntime.sleep(600)"),
    # Writes lines as fast as it can, forever.
    "floods": python("import sys\nline = b'x' * 65535 + b'\\n'\nwhile True:\n    sys.stdout.buffer.write(line)"),
    # Leaves a child in its process group that would outlive it, and never answers.
    "leaves-a-child": ("/bin/sh", "-c", "sleep 600 & sleep 600 & cat > /dev/null"),
}
ACTS = {"exits-mid-turn", "floods"}  # the hostile bridges that end a case by what they do, not by silence


def recording(monkeypatch: pytest.MonkeyPatch) -> list[process_module.StdioProcess]:
    """Every process the transport starts from now on, until `monkeypatch` is undone."""
    processes: list[process_module.StdioProcess] = []
    original = process_module.StdioProcess.__init__

    def record(self, *args, **kwargs):
        original(self, *args, **kwargs)
        processes.append(self)

    monkeypatch.setattr(process_module.StdioProcess, "__init__", record)
    return processes


@pytest.fixture
def started(monkeypatch) -> list[process_module.StdioProcess]:
    return recording(monkeypatch)


@pytest.fixture(scope="module")
def hostile_runs():
    """The vscodelm suite against each hostile bridge, all at once: they spend their time being waited for."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        processes = recording(monkeypatch)

        def run(name: str):
            target = Target(base_url="", bridge_command=HOSTILE[name], max_body_bytes=1 << 20,
                            read_timeout=AWAITED if name in ACTS else WAITED_OUT)
            return run_suite(target, apis=("vscodelm",))

        with ThreadPoolExecutor(len(HOSTILE)) as pool:
            runs = dict(zip(HOSTILE, pool.map(run, HOSTILE)))
    return runs, {name: [p for p in processes if p.command == HOSTILE[name]] for name in HOSTILE}


def group_members(group: int) -> list[int]:
    """The processes of a process group still running. A killed grandchild may stay a zombie until the machine's
    init reaps it, which is no longer the bridge's doing: it runs no more."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, group_id = stat.read_text().rsplit(")", 1)[1].split()[:3]
            if int(group_id) == group and state != "Z":
                members.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return members


def assert_none_left(processes: list[process_module.StdioProcess]) -> None:
    assert processes, "no process was started"
    for started_process in processes:
        assert started_process.process.returncode is not None, "a bridge process was never reaped"
        assert not group_members(started_process.process.pid), f"{started_process.shown} left processes behind"


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_bridge_ends_every_case_with_a_verdict_and_leaves_no_process(name, hostile_runs):
    run, started = hostile_runs[0][name], hostile_runs[1][name]
    assert {verdict.case_id for verdict in run.verdicts} == {case.id for case in load_cases("vscodelm")}
    # No verdict but for the checks whose property is that the bridge answers at all.
    assert {verdict.outcome for verdict in run.verdicts} <= {Outcome.ERROR, Outcome.FAILED}
    errors = [verdict.detail for verdict in run.verdicts if verdict.outcome is Outcome.ERROR]
    said = {"garbage": "read timeout", "exits-mid-turn": "ended its stdout", "never-answers": "read timeout",
            "floods": "wrote more than 1048576 bytes", "leaves-a-child": "read timeout"}[name]
    assert errors and all(said in detail or "exited" in detail for detail in errors), errors[:3]
    assert_none_left(started)


def test_a_bridge_that_dies_says_how_in_its_transcript(started):
    case = next(case for case in load_cases("vscodelm") if case.slug == "plain-turn")
    observed = play(case, Target(base_url="", bridge_command=HOSTILE["exits-mid-turn"], read_timeout=AWAITED))
    assert observed.exchange.error_kind == "exited"
    transcript = observed.exchange.process.transcript(10_000)
    assert '< {"jsonrpc": "2.0", "method": "lm/responsePart"' in transcript and "[exit status 3]" in transcript
    assert_none_left(started)


def test_a_bridge_that_cannot_be_started_is_unreachable():
    transport = StdioTransport(Target(base_url="", bridge_command=("/nonexistent/bridge", "--flag")))
    exchange = transport.send("lm/provideTokenCount", None, {"modelId": "m", "text": "Hi"})
    transport.close()
    assert exchange.error_kind == "unreachable" and "cannot start `/nonexistent/bridge --flag`" in exchange.error


def test_the_reproduction_replays_the_case_into_the_command(started):
    case = next(case for case in load_cases("vscodelm") if case.slug == "token-count")
    target = Target(base_url="", bridge_command=embedded_bridge(), bridge_model="lmconform-bridge")
    replay = play(case, target).exchange.request.reproduction()
    assert replay.startswith("{ printf '%s\\n' ") and replay.endswith(shown_command(embedded_bridge()))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    answer = subprocess.run(["/bin/sh", "-c", replay], capture_output=True, text=True, timeout=60, env=env)
    assert json.loads(answer.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {"count": 1}}
    assert_none_left(started)


def test_a_credential_on_the_bridge_command_is_never_shown():
    command = parse_command("lmconform bridge --endpoint http://h:1234 --api-key sk-secret --token=t0k3n")
    shown = shown_command(command, ("http://h",))
    assert "sk-secret" not in shown and "t0k3n" not in shown and "http://h" not in shown
    assert shown == "lmconform bridge --endpoint '[Filtered]:1234' --api-key '[Filtered]' '--token=[Filtered]'"
    with pytest.raises(ValueError, match="cannot be split"):
        parse_command("lmconform 'bridge")


def lines(*texts: str) -> JsonLines:
    reader = JsonLines()
    for index, text in enumerate(texts):
        reader.feed(Line(index, float(index), STDOUT, text.encode()))
    reader.finish()
    return reader


def test_a_message_split_over_lines_is_read_as_one_and_marked_split():
    indented = json.dumps({"jsonrpc": "2.0", "method": "lm/responsePart",
                           "params": {"requestId": 1, "part": {"type": "text", "value": "Hi"}}}, indent=2)
    reader = lines('{"jsonrpc": "2.0", "id": 1, "result": {}}', *indented.splitlines(), "")
    assert [message.split for message in reader.messages] == [False, True]
    assert reader.messages[1].value["params"]["part"]["value"] == "Hi" and not reader.garbage


def test_lines_that_are_not_json_are_garbage_even_when_they_look_like_a_start():
    reader = lines("starting up", '{"jsonrpc": "2.0",', '{"jsonrpc": "2.0", "id": 1, "result": {}}', "{", '  "a": 1')
    assert [line.text for line in reader.garbage] == ["starting up", '{"jsonrpc": "2.0",', "{", '  "a": 1']
    assert [message.value.get("id") for message in reader.messages] == [1]


def test_a_json_value_alone_inside_a_split_message_is_one_of_its_lines():
    reader = lines("{", '  "params": [', '    "Paris"', "  ]", "}")
    assert len(reader.messages) == 1 and reader.messages[0].value == {"params": ["Paris"]} and not reader.garbage


def test_a_process_started_while_another_thread_sets_variables_starts(monkeypatch):
    # The bridge's cases are started in a thread of their own while pytest sets PYTEST_CURRENT_TEST in the main one:
    # an exec reading the C library's environment as it is reallocated failed "Bad address" (a quarter of these
    # starts, before the environment was given as a copy).
    monkeypatch.setenv("LMCONFORM_CHURN", "")
    stop = threading.Event()

    def churn() -> None:  # as pytest sets PYTEST_CURRENT_TEST for each step and deletes it after each test
        count = 0
        while not stop.is_set():
            count += 1
            os.environ["LMCONFORM_CHURN"] = "x" * (count % 300)
            if count % 2:
                os.environ["LMCONFORM_CHURN_ADDED"] = str(count)
            else:
                os.environ.pop("LMCONFORM_CHURN_ADDED", None)

    churning = threading.Thread(target=churn)
    churning.start()
    errors = []
    try:
        for _ in range(150):  # the shortest of processes, so that starts come as fast as the race needs
            started = process_module.StdioProcess(("true",), 1000, input_closed=True)
            errors += [started.start_error] if started.start_error else []
            if started.process is not None:
                started.process.wait()
    finally:
        stop.set()
        churning.join()
        os.environ.pop("LMCONFORM_CHURN_ADDED", None)
    assert not errors, errors[:3]
