"""Installing the agents into the user's cache, `~/.cache/lmconform/agents/` (LMCONFORM_AGENTS_CACHE moves it;
without it, an LMCONFORM_TARGETS_CACHE moves it beside the real servers' folder), one folder per exact set of versions:

- the pinned set, `claude-code-2.1.332+codex-0.171.0+opencode-1.18.33/` (`lmconform agents install`, also run by
  `make targets`): the npm packages this folder's package.json and package-lock.json pin. `npm install --no-save` is
  used rather than `npm ci`, which refuses a lock that leaves out platform packages a registry mirror does not carry;
  with the lock beside package.json, npm installs exactly the versions and bytes it names and changes neither file;
- one agent at another version, `claude-code-2.1.340/` (`lmconform agents install claude-code@2.1.340`, or the first
  run that asks for it with `--agents claude-code@2.1.340`): npm resolves it and writes the folder's own
  package-lock.json, which records the exact version and integrity of every package it installed.

npm installs this machine's platform packages only. Install scripts are not run: lmconform starts each agent's native
binary itself. One install at a time in the cache (a lock file): of two runs asking for the same versions, the
second waits and finds them installed. A folder counts as installed once its stamp is written, last: an interrupted
install is started again from nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from pathlib import Path

from lmconform.agents.agent import Agent

PINS = Path(__file__).resolve().parent
PACKAGE_FILES = ("package.json", "package-lock.json")
DOWNLOAD_SIZE = "about 1.2 GB"  # the pinned set on disk, each agent's build for this machine
STAMP = ".installed"
NPM_OPTIONS = ("--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
NPM_QUERY_S = 120  # `npm view` asks the registry one question


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
    """The folder of the pinned set: `claude-code-2.1.332+codex-0.171.0+opencode-1.18.33`."""
    return cache_dir() / "+".join(f"{agent.name}-{pinned_version(agent)}" for agent in agents)


def version_dir(agent: Agent, version: str) -> Path:
    """The folder of one agent at one exact version: `claude-code-2.1.340`."""
    return cache_dir() / f"{agent.name}-{version}"


def _lock_digest() -> str:
    return hashlib.sha256((PINS / "package-lock.json").read_bytes()).hexdigest()


def _stamped(folder: Path, stamp: str) -> bool:
    found = folder / STAMP
    return found.is_file() and found.read_text().strip() == stamp


def installed(folder: Path) -> bool:
    return _stamped(folder, _lock_digest())


def _say(message: str) -> None:
    print(f"lmconform agents: {message}", file=sys.stderr, flush=True)


def _locked(folder: Path, stamp: str, announce: str, say: Callable[[str], None],
            populate: Callable[[Path], None]) -> Path:
    """`folder`'s node_modules, made by `populate` first (under the cache's lock) unless it carries `stamp`."""
    if _stamped(folder, stamp):
        return folder / "node_modules"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be installing the same versions now
        if _stamped(folder, stamp):
            return folder / "node_modules"
        say(announce)
        shutil.rmtree(folder, ignore_errors=True)  # what an interrupted install left
        folder.mkdir()
        populate(folder)
        (folder / STAMP).write_text(stamp + "\n")
    return folder / "node_modules"


def npm(folder: Path, *arguments: str) -> None:
    """`npm install …` in `folder`, its output kept in folder/install.log; InstallError with the log's end."""
    program = shutil.which("npm")
    if program is None:
        raise InstallError("npm is not on PATH: the agents are npm packages; install Node.js (it brings npm), then "
                           "run `lmconform agents install` again")
    log = folder / "install.log"
    with log.open("w") as sink:
        finished = subprocess.run([program, "install", *arguments, *NPM_OPTIONS], cwd=folder, stdout=sink,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if finished.returncode != 0:
        raise InstallError(f"npm failed (exit status {finished.returncode}): {_npm_error(log)} (all it said: {log})")


def _npm_error(log: Path) -> str:
    """npm's own sentence for what went wrong, from its log: the first error line that says more than a code."""
    lines = log.read_text(errors="replace").splitlines()
    said = [line.removeprefix("npm error").strip() for line in lines if line.startswith("npm error")]
    told = [line for line in said if line and not line.startswith(("code ", "A complete log"))]
    first = (told or said or lines or ["it said nothing"])[0]
    return re.sub(r"^[a-z0-9]+ (?=[A-Z])", "", first)  # npm's code before its sentence: `notarget No matching…`


def install(agents: tuple[Agent, ...], say: Callable[[str], None] = _say) -> Path:
    """The pinned agents' node_modules folder, installed first if it is not (or was interrupted)."""
    folder = install_dir(agents)
    names = ", ".join(f"{agent.title} {pinned_version(agent)}" for agent in agents)

    def populate(into: Path) -> None:
        for name in PACKAGE_FILES:
            shutil.copyfile(PINS / name, into / name)
        npm(into, "--no-save")

    return _locked(folder, _lock_digest(), f"installing {names} with npm into {folder}: {DOWNLOAD_SIZE} will be "
                                           "downloaded (once per machine)", say, populate)


class Packages(ABC):
    """Where the agents' npm packages come from: npm's registry, or, in lmconform's own tests, a folder of
    stand-ins."""

    @abstractmethod
    def resolve(self, package: str, wanted: str) -> str:
        """The exact version `wanted` names (a version, or a dist-tag such as `latest`); InstallError when none."""

    @abstractmethod
    def fetch(self, folder: Path, package: str, version: str) -> None:
        """`package` at exactly `version` installed into folder/node_modules; InstallError when it cannot be."""


class NpmRegistry(Packages):
    """The registry npm is configured with (npmjs.org unless the user's .npmrc names a mirror)."""

    def resolve(self, package: str, wanted: str) -> str:
        program = shutil.which("npm")
        if program is None:
            raise InstallError(f"npm is not on PATH: it is needed to find which version of {package} {wanted!r} "
                               "names (install Node.js, which brings npm)")
        try:
            asked = subprocess.run([program, "view", f"{package}@{wanted}", "version", "--json"], capture_output=True,
                                   text=True, stdin=subprocess.DEVNULL, timeout=NPM_QUERY_S)
        except subprocess.TimeoutExpired:
            raise InstallError(f"npm did not say within {NPM_QUERY_S} s which version of {package} {wanted!r} "
                               "names") from None
        try:
            said = json.loads(asked.stdout or "null")
        except ValueError:
            said = None
        if isinstance(said, dict) and "error" in said:
            raise InstallError(f"npm has no {package}@{wanted}: {said['error'].get('summary', 'not found')}")
        versions = said if isinstance(said, list) else [said]
        if asked.returncode != 0 or not versions or not all(isinstance(found, str) for found in versions):
            last = (asked.stderr.strip().splitlines() or [f"exit status {asked.returncode}"])[-1]
            raise InstallError(f"npm could not say which version of {package} {wanted!r} names: {last}")
        return versions[-1]  # a range names several, oldest first

    def fetch(self, folder: Path, package: str, version: str) -> None:
        manifest = {"name": "lmconform-agent", "private": True, "dependencies": {package: version}}
        (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        npm(folder)  # writes package-lock.json: every package's exact version and integrity


NPM = NpmRegistry()


def install_version(agent: Agent, version: str, packages: Packages = NPM, say: Callable[[str], None] = _say) -> Path:
    """`agent` at exactly `version` in a folder of its own, installed first if it is not: its node_modules."""
    folder = version_dir(agent, version)
    size = f"about {agent.download_mb} MB will be downloaded, as {agent.title} {agent.measured} took"
    return _locked(folder, version, f"installing {agent.title} {version} into {folder}: {size}", say,
                   lambda into: packages.fetch(into, agent.package, version))


def unavailable(agent: Agent, node_modules: Path) -> str | None:
    """Why `agent` cannot be run from `node_modules`, or None when its binary is there."""
    if not node_modules.is_dir():
        folder = node_modules.parent
        version = folder.name.removeprefix(f"{agent.name}-")
        which = (f"`lmconform agents install {agent.name}@{version}` installs it"
                 if folder == version_dir(agent, version) and "+" not in version
                 else f"`lmconform agents install` installs it (needs Node.js and npm; {DOWNLOAD_SIZE} for the three "
                      "agents)")
        return f"{agent.title} is not installed: {which}"
    if agent.binary(node_modules) is None:
        return (f"{agent.title} has no native binary for this machine in {node_modules / agent.package}: its npm "
                "package ships none for this operating system and processor")
    return None


def not_runnable(agents: Iterable[tuple[Agent, Path]]) -> str | None:
    """Why one of the agents a run asks for cannot be run from where it is installed (each with its node_modules),
    in one line saying how to mend it; None when every one can. A run that asks for an agent and cannot run it must
    not pass for want of it."""
    for agent, node_modules in agents:
        why = unavailable(agent, node_modules)
        if why:
            return f"--agents {agent.name}: {why}"
    return None
