"""pytest's entry point for lmconform (pyproject.toml's `pytest11`): it wakes lmconform's plugin (lmconform.plugin)
only for a run of lmconform's suites, a command line that names them (`pytest suites`, `pytest --pyargs
lmconform.suites`, a test of theirs) or the plugin itself (`-p lmconform.plugin`). In any other project's pytest run
lmconform then adds nothing: no option to `--help`, no fixture, no import of its own beyond this module."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

PLUGIN = "lmconform.plugin"
SUITES_PACKAGE = "lmconform.suites"
SUITES = Path(__file__).resolve().parent / "suites"


def names_the_suites(args: list[str]) -> bool:
    """Whether a command line's arguments name lmconform's suites: by package (with --pyargs) or by a path in them."""
    for arg in args:
        if arg.startswith("-"):
            continue
        if arg == SUITES_PACKAGE or arg.startswith(SUITES_PACKAGE + "."):
            return True
        try:
            path = Path(arg.split("::", 1)[0]).resolve()
        except (OSError, RuntimeError):  # not a path pytest could collect either
            continue
        if path == SUITES or SUITES in path.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # The plugin's options reach the parser through pytest_addoption, a historic hook, so a plugin registered now
    # has them parsed with the rest of the command line.
    if names_the_suites(args) and not early_config.pluginmanager.has_plugin(PLUGIN):
        early_config.pluginmanager.register(importlib.import_module(PLUGIN), PLUGIN)
