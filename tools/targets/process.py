"""A server process on a loopback port: started with its output in a log file, ready once it answers
`GET /v1/models`, and stopped with everything it spawned."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tools.targets.install import tail

LOOPBACK = "127.0.0.1"
_STOP_GRACE_S = 10.0
_POLL_S = 0.25


class TargetStartError(RuntimeError):
    """The server exited or never answered; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@dataclass
class RunningTarget:
    base_url: str  # without /v1, as Target.base_url
    api_key: str | None
    model: str
    label: str
    log_path: Path
    server_version: str | None
    process: subprocess.Popen = field(repr=False)
    # How the server was built and run where that decides what it computes: recorded in the run's fingerprint.
    build: dict = field(default_factory=dict)

    def stop(self) -> None:
        """End the server's process group (named by its leader's pid): SIGTERM, then SIGKILL after a grace period.
        Once the leader has exited its pid may be reused, so a stopped server is left alone."""
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def start(command: list[str], *, port: int, label: str, model: str, log_path: Path, api_key: str | None = None,
          server_version: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None,
          ready_timeout: float = 120.0, build: dict | None = None) -> RunningTarget:
    """Start `command` (which must listen on LOOPBACK:`port`) and wait until `/v1/models` answers 200."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        # A session of its own: stop() signals its process group, and a Ctrl-C at the terminal reaches the test
        # run alone, which then stops the server through stop().
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, cwd=cwd, start_new_session=True)
    running = RunningTarget(f"http://{LOOPBACK}:{port}", api_key, model, label, log_path, server_version, process,
                            build or {})
    try:
        _wait_ready(running, ready_timeout)
    except BaseException:  # not ready, or interrupted while waiting: never leave the server behind
        running.stop()
        raise
    return running


def _wait_ready(running: RunningTarget, timeout: float) -> None:
    headers = {"Authorization": f"Bearer {running.api_key}"} if running.api_key else {}
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            raise TargetStartError(f"{running.label} exited with status {running.process.returncode} before it was "
                                   f"ready; the end of {running.log_path}:\n{tail(running.log_path)}")
        try:
            answer = httpx.get(f"{running.base_url}/v1/models", headers=headers, timeout=5.0)
            if answer.status_code == 200:
                return
            last = f"HTTP {answer.status_code}"
        except httpx.HTTPError as error:
            last = type(error).__name__
        time.sleep(_POLL_S)
    raise TargetStartError(f"{running.label} was not ready after {timeout:g} s ({last}); "
                           f"the end of {running.log_path}:\n{tail(running.log_path)}")
