"""Headless Chromium for the tests of the pages lmconform writes: run on a page (`chromium`: a screenshot, or the DOM
as it is at the page's load event), or driven over its DevTools pipe (`evaluate`; `--remote-debugging-pipe`: JSON
messages ended by a NUL byte, on file descriptors 3 and 4 of the browser): a page opened, and a script evaluated in
it once it has loaded, its promise awaited. That waits for what the page does after its load event (the run's page
unpacks its parts then), and the page's clock runs as it does for a reader (under `--virtual-time-budget` it stands
still while a script runs, so nothing could be timed)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def installed() -> Path:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the Makefile's test setup installs it (apt-get install -y chromium); "
                    "run `make test`, or install it the same way")
    return CHROMIUM


def chromium(tmp_path: Path, *arguments: str, timeout: float = 300) -> subprocess.CompletedProcess:
    command = [str(installed()), *FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *arguments]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    assert finished.returncode == 0, finished.stderr[-2000:]
    return finished


class Pipe:
    def __init__(self, writer, reader) -> None:
        self.writer, self.reader, self.buffer, self.sent = writer, reader, b"", 0

    def message(self) -> dict:
        while b"\0" not in self.buffer:
            chunk = self.reader.read1(1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, until: str | None = None, **params) -> dict:
        """Send a command and return its result; with `until`, wait for that event of the session after it."""
        self.sent += 1
        number = self.sent
        self.writer.write(json.dumps({"id": number, "method": method, "params": params,
                                      **({"sessionId": session} if session else {})}).encode() + b"\0")
        self.writer.flush()
        result, waited = None, until is None
        while result is None or not waited:
            message = self.message()
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result = message["result"]
            waited = waited or message.get("method") == until
        return result


def evaluate(page: Path, expression: str, profile: Path, size: tuple[int, int], timeout: float = 300) -> object:
    """Open `page` in a window of `size` and evaluate `expression` in it once it has loaded: its value (a promise's,
    awaited), as JSON gives it."""
    to_browser, from_browser = os.pipe(), os.pipe()

    def pipes_on_3_and_4() -> None:  # in the browser's process, before it starts
        reading, writing = os.dup(to_browser[0]), os.dup(from_browser[1])
        os.dup2(reading, 3)
        os.dup2(writing, 4)

    browser = subprocess.Popen(
        [str(installed()), *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}",
         f"--window-size={size[0]},{size[1]}", "about:blank"],
        pass_fds=(3, 4), preexec_fn=pipes_on_3_and_4, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    os.close(to_browser[0])
    os.close(from_browser[1])
    pipe = Pipe(os.fdopen(to_browser[1], "wb"), os.fdopen(from_browser[0], "rb"))
    deadline = threading.Timer(timeout, browser.kill)  # a page that never settles closes the pipe, and fails
    deadline.start()
    try:
        target = next(info for info in pipe.call("Target.getTargets")["targetInfos"] if info["type"] == "page")
        session = pipe.call("Target.attachToTarget", targetId=target["targetId"], flatten=True)["sessionId"]
        pipe.call("Page.enable", session)
        pipe.call("Page.navigate", session, until="Page.loadEventFired", url=page.as_uri())
        answer = pipe.call("Runtime.evaluate", session, expression=expression, awaitPromise=True,
                           returnByValue=True)
        assert "exceptionDetails" not in answer, answer["exceptionDetails"]
        return answer["result"].get("value")
    finally:
        deadline.cancel()
        browser.kill()
        browser.wait()
        pipe.writer.close()
        pipe.reader.close()
