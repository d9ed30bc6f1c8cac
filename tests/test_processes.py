"""The fork server of `make check` (tests/processes.py): a process forked from it is what the same command started
by subprocess is, as far as a test can see: exit status, output, directory, environment; a timeout kills it, and
stopping the server leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import processes
import pytest

pytestmark = pytest.mark.waits

LMCONFORM = [sys.executable, "-m", "lmconform.cli"]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# Writes its pid where it runs, then waits as long as a test would wait for it.
# A process that says its pid in the file `pid`, written whole before it appears (renamed into place): the test that
# waits for the file reads it as soon as it exists.
SAYS_ITS_PID = "open('pid.part', 'w').write(str(os.getpid())); os.rename('pid.part', 'pid')"
SLOW_TEST = f"import os, time\n\ndef test_slow():\n    {SAYS_ITS_PID}\n    time.sleep(600)\n"
FORWARDED = list(processes.FORWARDING)  # how make check's pytest-xdist starts its workers, and runs their bridges
# Reads its directory and its environment as a test, and says so in pytest's own words.
WHERE_AM_I = '''
import os

def test_where():
    assert os.environ["LMCONFORM_MARK"] == "here" and os.getcwd() == os.environ["LMCONFORM_EXPECTED_CWD"]
'''


@pytest.fixture(scope="module")
def fork_server(tmp_path_factory) -> Iterator[None]:
    """The session's server (make check's), or one for this module, its address in the environment as the session's
    is."""
    if os.environ.get(processes.FORK_SERVER):
        yield
        return
    server = processes.ForkServer(tmp_path_factory.mktemp("server"))
    os.environ[processes.FORK_SERVER] = server.address
    try:
        yield
    finally:
        del os.environ[processes.FORK_SERVER]
        server.stop()


def started(command: list[str], **options) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, **options)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.parametrize("arguments", [["faults"], ["report", "missing.json", "-o", "page.html"], ["no-such-command"]],
                         ids=["listing", "unreadable-record", "usage-error"])
def test_a_forked_command_says_and_exits_as_a_started_one(fork_server, tmp_path, arguments):
    forked, real = processes.run([*LMCONFORM, *arguments], cwd=tmp_path, timeout=120), \
        started([*LMCONFORM, *arguments], cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert forked.stdout or forked.stderr


def test_a_forked_run_is_in_its_directory_with_its_environment(fork_server, tmp_path):
    (tmp_path / "test_where.py").write_text(WHERE_AM_I)
    env = {**os.environ, "LMCONFORM_MARK": "here", "LMCONFORM_EXPECTED_CWD": str(tmp_path)}
    forked = processes.run([*PYTEST, "test_where.py"], cwd=tmp_path, env=env, timeout=120)
    assert forked.returncode == 0 and "1 passed" in forked.stdout, forked.stdout + forked.stderr
    assert "warning" not in forked.stdout  # pytest rewrote what it rewrites in a process of its own
    wrong = processes.run([*PYTEST, "test_where.py"], cwd=tmp_path, env={**env, "LMCONFORM_MARK": "elsewhere"},
                          timeout=120)
    assert wrong.returncode == 1 and "1 failed" in wrong.stdout


def test_a_forked_run_past_its_timeout_is_killed_with_what_it_wrote(fork_server, tmp_path):
    (tmp_path / "test_slow.py").write_text(SLOW_TEST)
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        processes.run([*PYTEST, "-s", "test_slow.py"], cwd=tmp_path, timeout=5)
    assert timed_out.value.timeout == 5
    assert not alive(int((tmp_path / "pid").read_text()))


def test_a_command_python_would_start_differently_is_started_not_forked(fork_server, tmp_path):
    # The plugin is found on the PYTHONPATH given, which the server's Python did not start with.
    (tmp_path / "test_where.py").write_text(WHERE_AM_I)
    (tmp_path / "marking.py").write_text("import os\nos.environ['LMCONFORM_MARK'] = 'here'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "LMCONFORM_EXPECTED_CWD": str(tmp_path)}
    finished = processes.run([*PYTEST, "-p", "marking", "test_where.py"], cwd=tmp_path, env=env, timeout=120)
    assert finished.returncode == 0 and "1 passed" in finished.stdout, finished.stdout + finished.stderr


def test_a_forwarded_python_has_the_streams_directory_arguments_and_status_of_the_process_asking(fork_server,
                                                                                                 tmp_path):
    code = "import os, sys; print(os.getcwd(), sys.stdin.read(), sys.argv); sys.exit(3)"
    done = subprocess.run([*FORWARDED, "-u", "-c", code, "-u"], input="piped", capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (3, f"{tmp_path} piped ['-c', '-u']\n", "")


@pytest.mark.parametrize("code", [
    "import sys; sys.exit('a message')", "import sys; sys.exit(300)", "raise ValueError('uncaught')",
    "raise KeyboardInterrupt",
    "import atexit, threading, time; atexit.register(print, 'atexit'); "
    "threading.Thread(target=lambda: (time.sleep(0.5), print('a thread'))).start(); print('main')"],
    ids=["exit-message", "exit-300", "uncaught", "interrupted", "threads-then-atexit"])
def test_a_forked_process_ends_as_a_started_one(fork_server, tmp_path, code):
    forked, real = (started([*python, "-c", code], cwd=tmp_path) for python in (FORWARDED, [sys.executable]))
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


WAITING = f"import os, time; {SAYS_ITS_PID}; time.sleep(600)"


def forwarding_one_that_waits(directory: Path) -> tuple[subprocess.Popen, int]:
    """A forwarding process whose forked process waits, and the forked one's pid, once it has written it."""
    forwarding = subprocess.Popen([*FORWARDED, "-c", WAITING], cwd=directory)
    deadline = time.monotonic() + 60
    while not (directory / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return forwarding, int((directory / "pid").read_text())


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGKILL], ids=["terminated", "killed"])
def test_the_forwarding_process_ended_ends_the_forked_one(fork_server, tmp_path, ending):
    # SIGTERM is passed on, and both end by it; SIGKILL cannot be, and the server kills the forked process when the
    # forwarding one's connection closes (a run ends a bridge that way: it kills the bridge's process group).
    forwarding, pid = forwarding_one_that_waits(tmp_path)
    try:
        os.kill(forwarding.pid, ending)
        assert forwarding.wait(timeout=60) == -ending
        deadline = time.monotonic() + 60
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        forwarding.kill()


def test_a_forwarded_command_python_would_start_differently_is_started(fork_server, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    (tmp_path / "where.py").write_text("import os, sys; print(os.getpid(), os.getppid())")
    forwarding = subprocess.run([*FORWARDED, "-m", "where"], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=120)
    # Python itself, in the forwarding process (which exec'd it): its own pid, the test its parent.
    assert forwarding.returncode == 0 and forwarding.stdout.split()[1] == str(os.getpid()), forwarding


def test_stopping_the_server_ends_what_it_forked_and_itself(tmp_path, monkeypatch):
    server = processes.ForkServer(tmp_path, preload=False)  # what it has imported makes no difference here
    monkeypatch.setenv(processes.FORK_SERVER, server.address)
    (tmp_path / "test_slow.py").write_text(SLOW_TEST)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(processes.run, [*PYTEST, "test_slow.py"], cwd=tmp_path, timeout=600)
        while not (tmp_path / "pid").exists() and not running.done():
            time.sleep(0.05)
        server.stop()
        assert running.result().returncode == -signal.SIGKILL
    assert server.process.returncode == 0 and not alive(int((tmp_path / "pid").read_text()))
