"""A process spoken to over its stdin and stdout, one JSON-RPC message per line, with everything it did kept: each
line in both directions with its time, stderr, the exit status, and the messages its stdout carried.

Reading never blocks the caller: a thread per output stream reads as the process writes, so a process that floods
is cut off at a byte cap, one that stalls is given up on after the read timeout, and one that dies is noticed at
once. The process runs in a session of its own, and `close` ends the whole group and reaps its leader, whatever
state it is in: no process outlives its case.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from lmconform.target import shown_command
from lmconform.wire.jsonlines import STDERR, STDIN, STDOUT, JsonLines, Line, Message

READ_SIZE = 1 << 16
STDERR_KEPT_BYTES = 64 * 1024  # stderr is evidence, not protocol: what a chatty process logs past this is counted
TERM_GRACE_S = 1.0  # after SIGTERM, before SIGKILL
POLL_S = 0.02
REPLAY_PAUSE_S = 0.05  # a pause between two lines written at least this far apart is kept in the replay command


def id_key(value: Any) -> str | None:
    """A request id as a client that matches ids loosely would: 7 and "7" are the same request. Checks tell the JSON
    types apart; the transport only needs to know which request a message is about."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    return str(value)


def exact_key(value: Any) -> str:
    """A request id with its JSON type: 7 and "7" are different requests."""
    return json.dumps(value)


def correlation(value: Any) -> Any:
    """The id a stdout message is about: a response's `id`, or a notification's `params.requestId`."""
    if not isinstance(value, dict):
        return None
    if "method" in value:
        params = value.get("params")
        return params.get("requestId") if isinstance(params, dict) else None
    return value.get("id")


class StdioProcess:
    def __init__(self, command: tuple[str, ...], max_stdout_bytes: int, secrets: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, cwd: str | None = None, input_closed: bool = False) -> None:
        """`env` and `cwd` as for any process (default: this one's); `input_closed`: its stdin reads nothing, for a
        process that is given its task on its command line and would otherwise wait for more on stdin."""
        self.command = command
        self.shown = shown_command(command, secrets)
        self.max_stdout_bytes = max_stdout_bytes
        self.started = time.monotonic()
        self.lines: list[Line] = []
        self.stdout = JsonLines()
        self.stderr_dropped = 0
        self.stdout_ended = False
        self.flooded = False
        self.exit_status: int | None = None
        self.ended_by_lmconform = False  # it had to be stopped: it did not exit when its stdin ended
        self.start_error: str | None = None
        self._sent: dict[str, Any] = {}  # request ids written, by exact key
        self._loose: dict[str, Any] = {}  # and by loose key, the first of each
        self.owned: dict[str, list[Message]] = {}  # stdout messages about each request sent, by its exact key
        self._condition = threading.Condition()
        self._write_lock = threading.Lock()
        self._readers: list[threading.Thread] = []
        # The environment is given as a copy, never left to the C library's: a process started in a thread (the
        # bridge's cases played ahead) while another sets a variable (a module imported) would exec with an
        # environment being reallocated, and fail with "[Errno 14] Bad address" one start in a few hundred.
        try:
            self.process: subprocess.Popen | None = subprocess.Popen(
                list(command), stdin=subprocess.DEVNULL if input_closed else subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0, start_new_session=True,
                env=dict(os.environ) if env is None else env, cwd=cwd)
        except (OSError, ValueError) as error:
            self.process = None
            self.start_error = f"cannot start `{self.shown}`: {getattr(error, 'strerror', None) or error}"
            return
        for stream, name in ((self.process.stdout, STDOUT), (self.process.stderr, STDERR)):
            reader = threading.Thread(target=self._read, args=(stream, name), daemon=True,
                                      name=f"lmconform-stdio-{name}")
            reader.start()
            self._readers.append(reader)

    # -- what was said -------------------------------------------------------------------------------------------

    def clock(self) -> float:
        return time.monotonic() - self.started

    def owner(self, value: Any) -> str | None:
        """The exact key of the request a message names: the same id with the same type first, else loosely."""
        if isinstance(value, bool):
            return None
        exact = exact_key(value)
        if exact in self._sent:
            return exact
        loose = id_key(value)
        return exact_key(self._loose[loose]) if loose is not None and loose in self._loose else None

    def messages_about(self, request_id: Any) -> list[Message]:
        with self._condition:
            return list(self.owned.get(exact_key(request_id), ()))

    def stderr_text(self, last: int | None = None) -> str:
        lines = [line.text for line in self.lines if line.stream == STDERR]
        return "\n".join(lines[-last:] if last else lines)

    def replay_command(self) -> str:
        """A shell command that writes every line lmconform wrote, with the pauses between them, into the command."""
        steps, previous = [], None
        for line in (line for line in self.lines if line.stream == STDIN):
            if previous is not None and line.at - previous >= REPLAY_PAUSE_S:
                steps.append(f"sleep {line.at - previous:.2f}")
            steps.append(f"printf '%s\\n' {shlex.quote(line.text)}")
            previous = line.at
        return "{ " + "; ".join(steps or [":"]) + "; } | " + self.shown

    def transcript(self, limit: int) -> str:
        """The command, then every line both ways with its time (`>` written to it, `<` its stdout, `!` its
        stderr), then how it ended; at most `limit` characters of lines."""
        marks = {STDIN: ">", STDOUT: "<", STDERR: "!"}
        lines, used = [f"$ {self.shown}"], 0
        for line in self.lines:
            text = f"{line.at:8.3f} {marks[line.stream]} {line.text}"
            used += len(text)
            if used > limit:
                lines.append(f"[… {len(self.lines) - line.index} more lines: the report shows the first {limit} "
                             "characters; the command above replays the case]")
                break
            lines.append(text)
        if self.stderr_dropped:
            lines.append(f"[{self.stderr_dropped} more bytes on stderr were not kept]")
        if self.flooded:
            lines.append(f"[stdout passed {self.max_stdout_bytes} bytes: reading stopped]")
        lines.append(f"[{self.start_error or self.exit_text()}]")
        return "\n".join(lines)

    def exit_text(self) -> str:
        if self.exit_status is None:
            return "running"
        if self.exit_status < 0:
            name = signal.Signals(-self.exit_status).name if -self.exit_status in signal.valid_signals() else "?"
            how = f"killed by signal {-self.exit_status} ({name})"
        else:
            how = f"exit status {self.exit_status}"
        return how + (" after lmconform stopped it" if self.ended_by_lmconform else "")

    # -- writing and waiting ---------------------------------------------------------------------------------------

    def write(self, data: bytes, request_id: Any = None, is_request: bool = False) -> bool:
        """Write one line; False when the process can no longer read (it has exited or closed its stdin)."""
        if self.process is None or self.process.stdin is None:
            return False
        with self._write_lock:
            with self._condition:
                if is_request and not isinstance(request_id, bool):
                    self._sent.setdefault(exact_key(request_id), request_id)
                    loose = id_key(request_id)
                    if loose is not None:
                        self._loose.setdefault(loose, request_id)
                self._add(STDIN, data)
            try:
                self.process.stdin.write(data + b"\n")
                self.process.stdin.flush()
            except (OSError, ValueError):
                return False
        return True

    def wait(self, done: Callable[[], bool], last_progress: Callable[[], float], read_timeout: float,
             deadline: float) -> str | None:
        """Wait until `done()`; None then, else why not: "flood", "exited", "timeout" (nothing new for
        `read_timeout` since `last_progress()`, on the process clock) or "deadline" (`deadline` on that clock)."""
        with self._condition:
            while True:
                if done():
                    return None
                if self.flooded:
                    return "flood"
                if self.stdout_ended or self.process is None:
                    return "exited"
                now = self.clock()
                if now >= deadline:
                    return "deadline"
                remaining = min(last_progress() + read_timeout, deadline) - now
                if remaining <= 0:
                    return "timeout"
                self._condition.wait(remaining)

    # -- reading -----------------------------------------------------------------------------------------------

    def _add(self, stream: str, data: bytes) -> Line:
        line = Line(len(self.lines), self.clock(), stream, data)
        self.lines.append(line)
        return line

    def _read(self, stream: Any, name: str) -> None:
        pending, total, kept = b"", 0, 0
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except OSError:
                chunk = b""
            if not chunk:
                break
            total += len(chunk)
            *complete, pending = (pending + chunk).split(b"\n")
            with self._condition:
                for data in complete:
                    if name == STDOUT:
                        self._stdout_line(data)
                    elif kept < STDERR_KEPT_BYTES:
                        kept += len(data) + 1
                        self._add(STDERR, data)
                    else:
                        self.stderr_dropped += len(data) + 1
                if name == STDOUT and total > self.max_stdout_bytes:
                    self.flooded = True  # a process that never stops talking: stop listening, and stop it
                    self._condition.notify_all()
                    self._kill_group(signal.SIGKILL)
                    break
                self._condition.notify_all()
        with self._condition:
            if pending and not self.flooded:
                if name == STDOUT:
                    self._stdout_line(pending)  # a last line without its newline is still a line
                else:
                    self._add(STDERR, pending)
            if name == STDOUT:
                self.stdout.finish()
                self.stdout_ended = True
            self._condition.notify_all()

    def _stdout_line(self, data: bytes) -> None:
        message = self.stdout.feed(self._add(STDOUT, data))
        if message is not None:
            owner = self.owner(correlation(message.value))
            if owner is not None:
                self.owned.setdefault(owner, []).append(message)

    # -- ending --------------------------------------------------------------------------------------------------

    def close(self, grace: float) -> None:
        """End stdin, give the process `grace` seconds to exit, then stop its whole group; reap it either way."""
        if self.process is None:
            return
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        if not self._exited_within(grace):
            self.ended_by_lmconform = True
            self._kill_group(signal.SIGTERM)
            if not self._exited_within(min(TERM_GRACE_S, grace)):
                self._kill_group(signal.SIGKILL)
        # The leader has exited but is not reaped yet, so the group's id is still this process's: anything it
        # left running in its group is ended with it.
        self._kill_group(signal.SIGKILL)
        self.exit_status = self.process.wait()
        for reader in self._readers:
            reader.join(timeout=2.0)
        for stream in (self.process.stdout, self.process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _exited_within(self, seconds: float) -> bool:
        """Whether the process has exited (without reaping it, so that its group can still be signalled)."""
        if self.process is None:
            return True
        deadline = time.monotonic() + seconds
        while True:
            try:
                state = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return True
            if state is not None:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)

    def _kill_group(self, signum: int) -> None:
        if self.process is None or self.process.returncode is not None:
            return  # reaped: its id may belong to another process by now
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
