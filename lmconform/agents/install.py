"""Installing the pinned agents: `lmconform agents install` (also run by `make targets`) installs the npm packages
this folder's package.json and package-lock.json pin, with npm, into the user's cache, once per machine and set of
versions: `~/.cache/lmconform/agents/<versions>/` (LMCONFORM_AGENTS_CACHE moves it; without it, an
LMCONFORM_TARGETS_CACHE moves it beside the real servers' folder).

The lock names every platform package with its integrity hash; npm installs this machine's only. Install scripts
are not run: lmconform starts each agent's native binary itself. `npm install --no-save` is used rather than
`npm ci`, which refuses a lock that leaves out platform packages a registry mirror does not carry; with the lock
beside package.json, npm installs exactly the versions and bytes it names and changes neither file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from lmconform.agents.agent import Agent

PINS = Path(__file__).resolve().parent
PACKAGE_FILES = ("package.json", "package-lock.json")
DOWNLOAD_SIZE = "about 1.2 GB"
STAMP = ".installed"
NPM_ARGUMENTS = ("install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")


class InstallError(RuntimeError):
    pass


def user_cache_dir() -> Path:
    """lmconform's folder in the user's cache: shared by every checkout on the machine, so a fresh clone does not
    install the servers and agents again."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lmconform"


def cache_dir() -> Path:
    if os.environ.get("LMCONFORM_AGENTS_CACHE"):
        return Path(os.environ["LMCONFORM_AGENTS_CACHE"]).resolve()
    if os.environ.get("LMCONFORM_TARGETS_CACHE"):
        return Path(os.environ["LMCONFORM_TARGETS_CACHE"]).resolve().parent / "agents"
    return user_cache_dir() / "agents"


def pinned_versions() -> dict[str, str]:
    """The exact version of each npm package package.json pins."""
    return dict(json.loads((PINS / "package.json").read_text())["dependencies"])


def pinned_version(agent: Agent) -> str:
    return pinned_versions().get(agent.package, "")


def install_dir(agents: tuple[Agent, ...]) -> Path:
    """The folder of this set of versions: `claude-code-2.1.332+codex-0.171.0+opencode-1.18.33`."""
    return cache_dir() / "+".join(f"{agent.name}-{pinned_version(agent)}" for agent in agents)


def _lock_digest() -> str:
    return hashlib.sha256((PINS / "package-lock.json").read_bytes()).hexdigest()


def installed(folder: Path) -> bool:
    stamp = folder / STAMP
    return stamp.is_file() and stamp.read_text().strip() == _lock_digest()


def _say(message: str) -> None:
    print(f"lmconform agents: {message}", file=sys.stderr, flush=True)


def install(agents: tuple[Agent, ...], say: Callable[[str], None] = _say) -> Path:
    """The agents' node_modules folder, installed first if it is not (or was interrupted)."""
    folder = install_dir(agents)
    if installed(folder):
        return folder / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("npm is not on PATH: the agents are npm packages; install Node.js (it brings npm), then "
                           "run `lmconform agents install` again")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another checkout may be installing the same versions now
        if installed(folder):
            return folder / "node_modules"
        names = ", ".join(f"{agent.title} {pinned_version(agent)}" for agent in agents)
        say(f"installing {names} with npm into {folder}: {DOWNLOAD_SIZE} will be downloaded "
            "(once per machine)")
        shutil.rmtree(folder, ignore_errors=True)  # what an interrupted install left
        folder.mkdir()
        for name in PACKAGE_FILES:
            shutil.copyfile(PINS / name, folder / name)
        log = folder / "install.log"
        with log.open("w") as sink:
            finished = subprocess.run([npm, *NPM_ARGUMENTS], cwd=folder, stdout=sink, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        if finished.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            raise InstallError(f"npm failed (exit status {finished.returncode}); the end of {log}:\n{tail}")
        (folder / STAMP).write_text(_lock_digest() + "\n")
    return folder / "node_modules"


def unavailable(agent: Agent, node_modules: Path) -> str | None:
    """Why `agent` cannot be run from `node_modules`, or None when its binary is there."""
    if not node_modules.is_dir():
        return (f"{agent.title} is not installed: `lmconform agents install` installs it (needs Node.js and npm; "
                f"{DOWNLOAD_SIZE} for the three agents)")
    if agent.binary(node_modules) is None:
        return (f"{agent.title} has no native binary for this machine in {node_modules / agent.package}: its npm "
                "package ships none for this operating system and processor")
    return None


def not_runnable(agents: Iterable[Agent], node_modules: Path) -> str | None:
    """Why one of the agents a run asks for cannot be run from `node_modules`, in one line saying how to mend it;
    None when every one can. A run that asks for an agent and cannot run it must not pass for want of it."""
    for agent in agents:
        why = unavailable(agent, node_modules)
        if why:
            return f"--agents {agent.name}: {why}"
    return None
