"""A sandbox per agent run: a fresh folder with `home/` (HOME and the XDG folders, so no configuration of the
user's is read and nothing the agent writes outlives the run) and `work/` (the agent's working folder, PWD as well,
holding the task's file), and an environment built from nothing: no variable of the caller's (credentials, proxy
settings, an agent's own configuration) reaches the agent unless named here or by the agent's module.

The agent runs in a process group of its own (lmconform.wire.process) under a wall-clock limit; at the end the whole
group is stopped and reaped, and the folder removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lmconform.wire.process import StdioProcess

SECRET_FILE = "secret.txt"
# What a run keeps of the agent's stdout (its JSON events): a runaway agent is cut off past it.
MAX_STDOUT_BYTES = 32 * 1024 * 1024
STOP_GRACE_S = 2.0  # after the agent's own end, before its group is stopped
POLL_S = 0.1
FILLER_LINE = " ".join(["w"] * 40)  # a line of a task's filler (task_file)  # how often a run looks whether the relay has stopped it


@dataclass(frozen=True)
class Sandbox:
    root: Path
    home: Path
    work: Path

    @property
    def secret_file(self) -> Path:
        return self.work / SECRET_FILE

    def environment(self, **variables: str) -> dict[str, str]:
        """The agent's whole environment: the system's PATH, a home and XDG folders inside the sandbox, a plain
        terminal, and `variables`; nothing else of the caller's."""
        xdg = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state",
               "XDG_CACHE_HOME": ".cache"}
        environment = {
            "PATH": os.environ.get("PATH") or os.defpath,
            "HOME": str(self.home),
            "PWD": str(self.work),
            "TMPDIR": str(self.root / "tmp"),
            "SHELL": "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            **{name: str(self.home / folder) for name, folder in xdg.items()},
        }
        return {**environment, **variables}


def task_file(secret: str, file_words: int = 0) -> str:
    """The task's file: `file_words` words of filler (none for an ordinary task), then the line with the secret.
    The filler is short lines of one-letter words, so that it is many words in few bytes and few lines: what the
    agents' tools keep of a file or a command's output (Codex about 10 KiB of a command's output, opencode's read
    2,000 lines, Claude Code's Read 2,000 lines of 2,000 characters) still holds more words than the reference
    server's context takes."""
    full, rest = divmod(file_words, len(FILLER_LINE.split()))
    lines = [FILLER_LINE] * full + ([" ".join(FILLER_LINE.split()[:rest])] if rest else [])
    return "".join(f"{line}\n" for line in lines) + f"The secret word is {secret}.\n"


def create_sandbox(secret: str, file_words: int = 0) -> Sandbox:
    root = Path(tempfile.mkdtemp(prefix="lmconform-agent-")).resolve()
    sandbox = Sandbox(root, root / "home", root / "work")
    for folder in (sandbox.home, sandbox.work, root / "tmp"):
        folder.mkdir()
    sandbox.secret_file.write_text(task_file(secret, file_words))
    return sandbox


def remove_sandbox(sandbox: Sandbox) -> None:
    shutil.rmtree(sandbox.root, ignore_errors=True)


def start(argv: tuple[str, ...], sandbox: Sandbox, environment: dict[str, str]) -> StdioProcess:
    """The agent started in the sandbox's work folder, in a session (and process group) of its own, reading
    nothing on stdin: it has its task on its command line."""
    return StdioProcess(argv, MAX_STDOUT_BYTES, env=environment, cwd=str(sandbox.work), input_closed=True)


def wait(process: StdioProcess, seconds: float, stopped) -> str:
    """Wait for the agent to end, for `seconds` at most, or until `stopped()` (the relay's limit): "exited",
    "deadline", "stopped", or "flood" (it wrote more than a run keeps)."""
    # Progress is always "now", so the process's wait returns only for the end, the deadline or a flood, and
    # looks at `stopped` at least every POLL_S.
    why = process.wait(stopped, lambda: process.clock() - seconds + POLL_S, seconds, seconds)
    return "stopped" if why is None else why


def stop(process: StdioProcess, ended: bool) -> None:
    """Stop the agent's whole group and reap it: at once when it was stopped at a limit, else after a moment to end
    by itself (it closed its output, and is exiting)."""
    process.close(STOP_GRACE_S if ended else 0.0)
