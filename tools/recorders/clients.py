"""The recorder scripts, the pinned clients they drive, and their installs in lmconform's folder of the user's
cache (`recorders`; see tools.targets.install.user_cache_dir).

    python -m tools.recorders.clients install           # install what is missing; quick when nothing is
    python -m tools.recorders.clients run BASE_URL      # every recorder against a running `lmconform record`
    python -m tools.recorders.clients run BASE_URL openai-node      # only some

The suite's own openai and anthropic SDKs (pinned in pyproject.toml) drive openai_python.py and
anthropic_python.py. The openai npm package and the openai-agents SDK are pinned here, so that a re-recording
compares the same versions with the committed cases; the agents SDK gets a virtualenv of its own because it may
need another openai version than the suite's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tools.targets.install import user_cache_dir

HERE = Path(__file__).resolve().parent
CACHE = user_cache_dir() / "recorders"
# The newest release whose engines accept Node.js 20; 7.x needs Node.js 22.
NODE_PACKAGE, NODE_VERSION = "openai", "6.49.0"
AGENTS_PACKAGE, AGENTS_VERSION = "openai-agents", "0.24.0"
NODE_FOLDER = CACHE / "node"
AGENTS_VENV = CACHE / "agents"
INSTALL_TIMEOUT_S = 900


class InstallError(RuntimeError):
    """A client could not be installed: usually the package registry is unreachable."""


def _install(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise InstallError(f"installing {what} took over {INSTALL_TIMEOUT_S} s: is the package registry reachable?") \
            from None
    except FileNotFoundError as error:
        raise InstallError(f"installing {what} needs {error.filename}, which is not installed") from None
    if done.returncode != 0:
        raise InstallError(f"installing {what} failed (is the package registry reachable?): "
                           f"{' '.join(command)}\n{(done.stderr or done.stdout)[-2000:]}")


def node_modules() -> Path:
    """The node_modules folder holding the pinned openai npm package, installed on first use."""
    installed = NODE_FOLDER / "node_modules" / NODE_PACKAGE / "package.json"
    if not installed.is_file() or json.loads(installed.read_text()).get("version") != NODE_VERSION:
        NODE_FOLDER.mkdir(parents=True, exist_ok=True)
        _install(["npm", "install", "--prefix", str(NODE_FOLDER), "--no-audit", "--no-fund", "--save-exact",
                  f"{NODE_PACKAGE}@{NODE_VERSION}"], f"the {NODE_PACKAGE} npm package {NODE_VERSION}")
    return NODE_FOLDER / "node_modules"


def agents_python() -> Path:
    """The interpreter of the virtualenv holding the pinned openai-agents SDK, made on first use."""
    python = AGENTS_VENV / "bin" / "python"
    marker = f"{AGENTS_PACKAGE.replace('-', '_')}-{AGENTS_VERSION}.dist-info"
    if not any(AGENTS_VENV.glob(f"lib/python*/site-packages/{marker}")):
        if not python.exists():
            _install([sys.executable, "-m", "venv", str(AGENTS_VENV)], "a virtualenv for the agents SDK")
        _install([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  f"{AGENTS_PACKAGE}=={AGENTS_VERSION}"], f"{AGENTS_PACKAGE} {AGENTS_VERSION}")
    return python


def _openai_python() -> tuple[list[str], dict[str, str]]:
    return [sys.executable, str(HERE / "openai_python.py")], {}


def _anthropic_python() -> tuple[list[str], dict[str, str]]:
    return [sys.executable, str(HERE / "anthropic_python.py")], {}


def _openai_node() -> tuple[list[str], dict[str, str]]:
    return ["node", str(HERE / "openai_node.mjs")], {"LMCONFORM_NODE_MODULES": str(node_modules())}


def _openai_agents() -> tuple[list[str], dict[str, str]]:
    # The SDK exports traces to OpenAI unless told not to; the script turns tracing off too.
    return [str(agents_python()), str(HERE / "openai_agents.py")], {"OPENAI_AGENTS_DISABLE_TRACING": "1"}


# Each recorder by the client name the recording endpoint gives its cases: its command line (less the base URL)
# and extra environment, installing what it needs first.
RECORDERS = {"openai-python": _openai_python, "openai-node": _openai_node, "openai-agents": _openai_agents,
             "anthropic-python": _anthropic_python}


def run(base_url: str, names: tuple[str, ...] = tuple(RECORDERS), environment: dict[str, str] | None = None) -> None:
    """The recorders `names` against the recording endpoint at `base_url`, one after the other."""
    for name in names:
        command, extra = RECORDERS[name]()
        done = subprocess.run([*command, base_url], env={**(environment or os.environ), **extra},
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"the {name} recorder failed:\n{done.stderr[-3000:]}")


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["install"]:
            print(node_modules())
            print(agents_python())
        case ["run", base_url, *names] if set(names) <= set(RECORDERS):
            run(base_url, tuple(names) or tuple(RECORDERS))
        case _:
            sys.exit(f"usage: {sys.argv[0]} install | run BASE_URL [{' | '.join(RECORDERS)} ...]")
