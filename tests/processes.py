"""The Python processes of `make check`: its pytest-xdist workers, and the runs of lmconform its tests make
(`python -m pytest ...`, the suite, and `python -m lmconform.cli ...`), which they judge by what users see of them:
the exit status, the output, the files.

`make test` starts each as users do. `make check` (LMCONFORM_TEST_BUDGET=check) forks each from one process of the
session that has imported pytest, its plugins, lmconform and the SDKs once; the forked process then runs the module
or the code as `python -m` or `python -c` does, with the command's arguments, directory, environment and standard
streams, and ends as a process ends (exit status, atexit, its threads). Starting Python and importing those is most
of what a short run of the suite costs (1.4 CPU-seconds a run, 0.7 of them before its first case, 3 more for a run
that loads the SDKs; make check makes about seventy) and 3 of the 4 CPU-seconds a worker takes to collect the tests.

The forking process is started by the session's first process (the xdist controller, or pytest alone) and reached
through a Unix socket whose path the workers inherit in FORK_SERVER; each request carries the forked process's
stdin, stdout and stderr as file descriptors. The tests that are about the start-up itself (the console script, the
entry point, an installed wheel) start their process with subprocess, and a command Python would start differently
(another PYTHONPATH, say) is started so too.
"""

from __future__ import annotations

import gc
import json
import locale
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORK_SERVER = "LMCONFORM_TEST_FORK_SERVER"
# What a forked process would otherwise import itself: the suite's plugin and what its runs load, the commands the
# tests run, the reference server, the SDKs the client checks replay through. lmconform.cli itself is left to each
# run, which executes it as __main__ (runpy refuses a module already imported).
PRELOADED = ("lmconform.plugin", "lmconform.check_command", "lmconform.report.commands",
             "lmconform.reference.command", "lmconform.reference", "lmconform.snapshots", "lmconform.surfaces",
             "lmconform.suite_fixtures", "lmconform.clients.openai_python", "lmconform.clients.anthropic_python",
             "uvicorn.lifespan.on", "uvicorn.loops.auto", "httpcore")
FORKED_MODULES = ("pytest", "lmconform.cli")
_LENGTH = struct.Struct("!I")


def run(command: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None,
        timeout: float) -> subprocess.CompletedProcess[str]:
    """subprocess.run(command, capture_output=True, text=True, ...), forked when a fork server is running and the
    command is `sys.executable -m MODULE` of FORKED_MODULES."""
    address = os.environ.get(FORK_SERVER)
    environment = dict(os.environ if env is None else env)
    if not address or command[:2] != [sys.executable, "-m"] or command[2] not in FORKED_MODULES \
            or _interpreter_settings(environment) != _interpreter_settings(os.environ):
        return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    with open(os.devnull, "rb") as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid, replies = _fork(address, command[1:], cwd or os.getcwd(), environment, [stdin, out, err])
        with replies.connection:
            replies.connection.settimeout(timeout)
            try:
                status, timed_out = int(replies.next()), False
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                replies.connection.settimeout(None)
                status, timed_out = int(replies.next()), True
        stdout, stderr = (_text(stream) for stream in (out, err))
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
    return subprocess.CompletedProcess(command, status, stdout, stderr)


def _fork(address: str, arguments: list[str], cwd: str | Path, environment: Mapping[str, str],
          streams: list) -> tuple[int, _Lines]:
    """Asks the server for `python ARGUMENTS` in `cwd` with `environment` and `streams` as its stdin, stdout and
    stderr: the forked process's pid, and the connection its exit status will come on."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(address)
    body = json.dumps({"argv": [str(part) for part in arguments], "cwd": str(Path(cwd).resolve()),
                       "env": dict(environment)}).encode()
    socket.send_fds(connection, [_LENGTH.pack(len(body))], [stream.fileno() for stream in streams])
    connection.sendall(body)
    replies = _Lines(connection)
    return int(replies.next()), replies


class _Lines:
    """The server's replies, a line each (the pid, then the exit status), read off the socket as they come."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.buffered = b""

    def next(self) -> str:
        while b"\n" not in self.buffered:
            data = self.connection.recv(64)
            if not data:
                raise ConnectionError("the fork server closed the connection before the process ended")
            self.buffered += data
        line, _, self.buffered = self.buffered.partition(b"\n")
        return line.decode()


def _interpreter_settings(environment: Mapping[str, str]) -> dict[str, str]:
    """The variables Python reads as it starts (PYTHONPATH, PYTHONHASHSEED, ...): the server started with the
    session's, and a command given others starts a Python of its own."""
    return {name: value for name, value in environment.items() if name.startswith("PYTHON")}


def _text(stream) -> str:
    """What text=True makes of a captured stream: the locale's encoding, universal newlines."""
    stream.seek(0)
    text = stream.read().decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


class ForkServer:
    """The fork server of a session: started by the first process, stopped when the session ends (or when that
    process dies, which closes the server's stdin)."""

    def __init__(self, directory: Path, preload: bool = True) -> None:
        self.address = str(directory / "fork-server")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.address)
        listener.listen(64)
        # The socket exists before a worker starts: a request waits in its backlog until the server has imported.
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(listener.fileno()), *(["preload"] * preload)], cwd=ROOT,
            env={**os.environ, FORK_SERVER: self.address}, stdin=subprocess.PIPE, pass_fds=[listener.fileno()])
        listener.close()

    def stop(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _serve(listener: socket.socket) -> tuple[dict, list[int]] | None:
    """Until stdin closes, fork a process for each request and tell its client the pid, then the exit status.
    Returns in a forked process, with its request and its stdout and stderr descriptors; None in the server."""
    waiting: dict[int, socket.socket] = {}
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [], 0.02)
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            for pid, connection in waiting.items():  # the session is over: what it still waits on is killed
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                connection.close()
            return None
        if listener in readable:
            connection, _ = listener.accept()
            head, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, 3)
            (length,) = _LENGTH.unpack(head)
            body = b""
            while len(body) < length:
                body += connection.recv(length - len(body))
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                listener.close()
                for other in waiting.values():
                    other.close()
                connection.close()
                return json.loads(body), fds
            for fd in fds:
                os.close(fd)
            connection.sendall(f"{pid}\n".encode())
            waiting[pid] = connection
        for pid in list(waiting):
            ended, status = os.waitpid(pid, os.WNOHANG)
            if ended:
                connection = waiting.pop(pid)
                connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                connection.close()


def _preload() -> None:
    """Import PRELOADED the way a run of the suite imports its modules: inside pytest's start-up, so that the modules
    pytest rewrites the asserts of (its plugins', lmconform's) are rewritten, and a forked run does not find them
    imported behind its back (pytest would warn that it cannot rewrite them)."""
    import importlib

    import pytest

    class Preload:
        @staticmethod
        def pytest_configure() -> None:
            for module in PRELOADED:
                importlib.import_module(module)

    with open(os.devnull, "w") as devnull:
        saved = sys.stdout
        sys.stdout = devnull
        try:
            pytest.main(["--help", "--noconftest", "-p", "no:cacheprovider"], plugins=[Preload()])
        finally:
            sys.stdout = saved
    # Each run would compile the fast paths of the schemas it validates with (lmconform.schemas.fast), a tenth of its
    # CPU-seconds: compiled here once, for the profile of the reference server, the runs' usual target, at the levels
    # runs judge (all) and it refuses a request at (MUST and SHOULD).
    from lmconform.reference.refusal import PROFILE, REFUSED_LEVELS
    from lmconform.schemas import BASE_URI, schema_set
    from lmconform.vocabulary import Level

    for uri in schema_set(PROFILE).documents:
        for levels in (tuple(Level), REFUSED_LEVELS):
            schema_set(PROFILE).valid(uri.removeprefix(BASE_URI), None, levels)
    # What was imported lives as long as each forked process: out of its collector's sight, as in lmconform's runs
    # (lmconform.wire.collector), and its pages left shared with the server.
    gc.collect()
    gc.freeze()


def _become(request: dict, fds: list[int]) -> None:
    """The forked process made the process `python ARGV` would be (`-m MODULE ...` or `[-u] -c CODE ...`), then
    that module or code run."""
    import runpy

    for fd, standard in zip(fds, (0, 1, 2)):
        os.dup2(fd, standard)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    arguments = request["argv"]
    while arguments[0] == "-u":  # unbuffered: what pytest-xdist asks of its workers' output, a pipe here
        arguments = arguments[1:]
    if arguments[0] == "-m":
        sys.argv = arguments[1:]
        sys.path[0] = request["cwd"]  # what `python -m` puts first
        runpy.run_module(arguments[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *arguments[2:]]
        sys.path[0] = ""  # what `python -c` puts first
        exec(compile(arguments[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})


def _forwarded(arguments: list[str]) -> int:
    """`python processes.py fork ARGUMENTS`: `python ARGUMENTS` forked by the session's server with this process's
    directory, environment and standard streams, its exit status this process's, a signal to this process passed on
    to it. Without a server, Python itself. pytest-xdist starts the workers of `make check` so (`--tx`)."""
    address = os.environ.get(FORK_SERVER)
    if not address:
        os.execv(sys.executable, [sys.executable, *arguments])
    pid, replies = _fork(address, arguments, os.getcwd(), os.environ, [sys.stdin, sys.stdout, sys.stderr])
    for passed_on in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(passed_on, lambda number, _: os.kill(pid, number))
    status = int(replies.next())
    if status < 0:  # ended by a signal: so does this process
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    if sys.argv[1] == "fork":
        sys.exit(_forwarded(sys.argv[2:]))
    served = socket.socket(fileno=int(sys.argv[1]))
    # What `python -m` and `python -c` put first, started where the runs mostly start: lmconform is then found on
    # sys.path as in them, and pytest's import hook rewrites it as in them (it finds modules on sys.path only, not
    # through the editable install's finder).
    sys.path[0] = str(ROOT)
    if sys.argv[2:] == ["preload"]:
        _preload()
    forked = _serve(served)
    if forked is not None:
        _become(*forked)
