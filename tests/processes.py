"""The Python processes of `make check`: its pytest-xdist workers, the runs of lmconform its tests make (`python -m
pytest ...`, the suite, and `python -m lmconform.cli ...`), which they judge by what users see of them: the exit
status, the output, the files; and the bridges those runs start, a process for each vscodelm case.

`make test` starts each as users do. `make check` (LMCONFORM_TEST_BUDGET=check) forks each from one process of the
session that has imported pytest, its plugins, lmconform and the SDKs once, and played a streamed case of each API
(the SDKs build their models' validators on the first stream they read); the forked process then runs the module or
the code as `python -m` or `python -c` does, with the command's arguments, directory, environment and standard
streams, and ends as Python ends (exit status, threads joined, atexit), all but the teardown of what it inherited.
Starting Python and importing those is most of what a short run of the suite costs (1.25 CPU-seconds a run that
replays a stream of each API, 0.37 forked) and of a bridge (90 ms; 50 forked, the forwarding process's 13 included).

The forking process is started by the session's first process (the xdist controller, or pytest alone) and reached
through a Unix socket whose path the workers inherit in FORK_SERVER; each request carries the forked process's
stdin, stdout and stderr as file descriptors. processes.run asks it for a run; a process that lmconform or
pytest-xdist starts asks it through tests/forward.py, which stands in for Python on their command line (PYTHON, and
the embedded bridge's command in a worker). The tests that are about the start-up itself (the console script, the
entry point, an installed wheel) start their process with subprocess, and a command Python would start differently
(another PYTHONPATH, say) is started so too.
"""

from __future__ import annotations

import contextlib
import gc
import locale
import marshal
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

import forward

ROOT = Path(__file__).resolve().parent.parent
FORK_SERVER = forward.FORK_SERVER
# The interpreter of a Python process a test has lmconform start (a bridge): in make check the forwarding process
# (tests/forward.py), whose command is forked; else Python.
FORWARDING = (sys.executable, "-S", str(Path(forward.__file__).resolve()))
PYTHON = FORWARDING if os.environ.get(FORK_SERVER) else (sys.executable,)
# What a forked process would otherwise import itself: the suite's plugin and what its runs load, the commands the
# tests run, the reference server, the SDKs the client checks replay through. lmconform.cli itself is left to each
# run, which executes it as __main__ (runpy refuses a module already imported).
PRELOADED = ("lmconform.plugin", "lmconform.check_command", "lmconform.report.commands",
             "lmconform.reference.command", "lmconform.reference", "lmconform.snapshots", "lmconform.surfaces",
             "lmconform.suite_fixtures", "lmconform.clients.openai_python", "lmconform.clients.anthropic_python",
             "uvicorn.lifespan.on", "uvicorn.loops.auto", "httpcore")
FORKED_MODULES = ("pytest", "lmconform.cli")


def run(command: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None,
        timeout: float) -> subprocess.CompletedProcess[str]:
    """subprocess.run(command, capture_output=True, text=True, ...), forked when a fork server is running, the command
    is `sys.executable -m MODULE` of FORKED_MODULES and the server forks it."""
    address = os.environ.get(FORK_SERVER)
    if address and command[:2] == [sys.executable, "-m"] and command[2] in FORKED_MODULES:
        forked = _forked(address, command, Path(cwd or os.getcwd()).resolve(), dict(os.environ if env is None else env),
                         timeout)
        if forked is not None:
            return forked
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def workers(count: int, dist: str = "load") -> list[str]:
    """pytest-xdist's `-n COUNT --dist DIST` for a pytest run a test makes; in make check its workers are forked
    too, as make check's own are (a worker started costs a second of Python and pytest's plugins)."""
    if PYTHON == FORWARDING:
        return ["--dist", dist, "--tx", f"{count}*popen//python={' '.join(FORWARDING)}"]
    return ["-n", str(count), "--dist", dist]


def fork_embedded_bridges() -> None:
    """Fork the bridge this process's embedded runs start for each vscodelm case (about a hundred in make check's
    workers). In a worker only: the report of a run shows its bridge's command, and the runs the tests make of the
    suite (forked, and the workers such a run starts itself) must show the same."""
    from lmconform.run import plan

    plan.EMBEDDED_BRIDGE = (*FORWARDING, *plan.EMBEDDED_BRIDGE[1:])


def _forked(address: str, command: list[str], cwd: Path, environment: dict[str, str],
            timeout: float) -> subprocess.CompletedProcess[str] | None:
    with open(os.devnull, "rb") as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        asked = forward.ask(address, command[1:], str(cwd), environment, (stdin.fileno(), out.fileno(), err.fileno()))
        if asked is None:
            return None
        pid, replies = asked
        replies.connection.settimeout(timeout)
        try:
            status, timed_out = int(replies.next()), False
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            replies.connection.settimeout(None)
            status, timed_out = int(replies.next()), True
        finally:
            replies.connection.close()
        stdout, stderr = (_text(stream) for stream in (out, err))
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
    return subprocess.CompletedProcess(command, status, stdout, stderr)


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
    """Until stdin closes, fork a process for each request and tell its client the pid, then the exit status; kill
    a process whose client is gone. Returns in a forked process, with its request and its standard streams'
    descriptors; None in the server."""
    waiting: dict[int, socket.socket] = {}
    while True:
        readable, _, _ = select.select([listener, sys.stdin, *waiting.values()], [], [], 0.02)
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            for pid in list(waiting):  # the session is over: what it still waits on is killed
                _kill(pid, waiting)
            return None
        for pid, connection in list(waiting.items()):
            # A client sends nothing after its request: readable, its connection is closed, the client gone (a
            # forwarding process killed, say, which cannot pass SIGKILL on). The process it asked for goes too.
            if connection in readable and not _received(connection):
                _kill(pid, waiting)
        if listener in readable:
            connection, _ = listener.accept()
            head, fds, _, _ = socket.recv_fds(connection, 4, 3)
            length = int.from_bytes(head, "big")
            body = b""
            while len(body) < length:
                body += connection.recv(length - len(body))
            request = marshal.loads(body)
            if not _forkable(request):
                _tell(connection, forward.START)
                connection.close()
                for fd in fds:
                    os.close(fd)
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                listener.close()
                for other in waiting.values():
                    other.close()
                connection.close()
                return request, fds
            for fd in fds:
                os.close(fd)
            _tell(connection, pid)
            waiting[pid] = connection
        for pid in list(waiting):
            ended, status = os.waitpid(pid, os.WNOHANG)
            if ended:
                _ended(waiting.pop(pid), status)


def _forkable(request: dict) -> bool:
    """A command `python [-u ...] -m MODULE ...` or `-c CODE ...`, with the variables Python reads as it starts
    (PYTHONPATH, PYTHONHASHSEED, ...) the server's: it would start otherwise, which a forked process cannot show."""
    arguments = _after_options(request["argv"])
    return bool(arguments) and arguments[0] in ("-m", "-c") \
        and _interpreter_settings(request["env"]) == _interpreter_settings(os.environ)


def _after_options(arguments: list[str]) -> list[str]:
    """The command without its leading `-u` (unbuffered: what pytest-xdist asks of its workers' output, a pipe
    here), the one option of Python's a forked process takes as it is."""
    while arguments[:1] == ["-u"]:
        arguments = arguments[1:]
    return arguments


def _kill(pid: int, waiting: dict[int, socket.socket]) -> None:
    os.kill(pid, signal.SIGKILL)
    _ended(waiting.pop(pid), os.waitpid(pid, 0)[1])


def _received(connection: socket.socket) -> bytes:
    """What a readable client connection holds: nothing when the client is gone, closed or reset (a client killed
    with a reply unread resets its connection: the server, which serves the whole session, must not end with it)."""
    try:
        return connection.recv(1)
    except ConnectionResetError:
        return b""


def _ended(connection: socket.socket, status: int) -> None:
    """Tell a process's client its exit status, if the client is still there."""
    _tell(connection, os.waitstatus_to_exitcode(status))
    connection.close()


def _tell(connection: socket.socket, reply: object) -> None:
    with contextlib.suppress(OSError):  # its client may be gone
        connection.sendall(f"{reply}\n".encode())


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
    _warm_up()
    # What was imported lives as long as each forked process: out of its collector's sight, as in lmconform's runs
    # (lmconform.wire.collector), and its pages left shared with the server.
    gc.collect()
    gc.freeze()


def _end(main, *arguments) -> NoReturn:
    """Run `main(*arguments)` as the main module of a process and end as Python ends, but for the finalization: what
    the server imported would be torn down object by object, each page it touches copied from the server's, 120 ms of
    every process forked against 2 for the rest, more than a bridge's whole start. The exit status, the message of a
    SystemExit, an uncaught exception's traceback and the death by SIGINT of an uncaught KeyboardInterrupt are
    Python's; so is the order of the end: the threads that are not daemons joined, atexit's functions, the standard
    streams flushed."""
    import atexit
    import threading

    try:
        main(*arguments)
        status = 0
    except SystemExit as exiting:
        status = _exit_status(exiting.code)
    except BaseException as uncaught:  # what Python itself does with whatever the main module raised
        traceback = uncaught.__traceback__
        while traceback is not None and traceback.tb_frame.f_code.co_filename == __file__:  # this module's frames
            traceback = traceback.tb_next
        sys.excepthook(type(uncaught), uncaught.with_traceback(traceback), traceback)
        status = -signal.SIGINT if isinstance(uncaught, KeyboardInterrupt) else 1
    threading._shutdown()  # type: ignore[attr-defined]  # what Python's own end calls first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status)


def _exit_status(code: object) -> int:
    """The exit status of `raise SystemExit(code)`, its message written as Python writes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


# A streamed case of each API whose answers the SDKs replay.
WARM_UP_CASES = ("chat/void-weather-tool", "responses/calculate-tool-stream", "messages/weather-tool-stream")


def _warm_up() -> None:
    """Play WARM_UP_CASES against a reference server, stopped before the first fork (a forked process has only the
    thread that forked, and a lock another thread held stays held). What a run does the first time in a process, each
    forked process would otherwise do again: the SDKs build the validators of their models as they first replay a
    stream (pydantic), the checks and the normalisers their tables."""
    import threading

    from lmconform.reference import ReferenceServer
    from lmconform.run.plan import run_suite
    from lmconform.target import Target

    with ReferenceServer() as server:
        run_suite(Target(base_url=server.base_url), apis=("chat", "responses", "messages"), cases=WARM_UP_CASES)
    for thread in threading.enumerate():  # the server's worker threads end as its event loop closes
        if thread is not threading.current_thread():
            thread.join(timeout=30)
    if threading.active_count() != 1:
        raise RuntimeError(f"threads left by the warm-up: {threading.enumerate()}")


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
    arguments = _after_options(request["argv"])
    if arguments[0] == "-m":
        sys.argv = arguments[1:]
        sys.path[0] = request["cwd"]  # what `python -m` puts first
        runpy.run_module(arguments[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *arguments[2:]]
        sys.path[0] = ""  # what `python -c` puts first
        exec(compile(arguments[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})


if __name__ == "__main__":
    served = socket.socket(fileno=int(sys.argv[1]))
    # What `python -m` and `python -c` put first, started where the runs mostly start: lmconform is then found on
    # sys.path as in them, and pytest's import hook rewrites it as in them (it finds modules on sys.path only, not
    # through the editable install's finder).
    sys.path[0] = str(ROOT)
    if sys.argv[2:] == ["preload"]:
        _preload()
    forked = _serve(served)
    if forked is not None:
        _end(_become, *forked)
