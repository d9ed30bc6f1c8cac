"""Fixtures the project's own tests share."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import budget
import httpx
import processes
import pytest
from hypothesis import settings

from lmconform.reference import ReferenceServer

# The property tests draw the same examples on every run (derandomize): a gate that passed on a commit passes on it
# again, and a failure shows on the change that brought it, with the example that shows it. HYPOTHESIS_PROFILE=explore
# draws new ones each run, to look further than the gate does; a failure found so is made a test of its own.
settings.register_profile("gate", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gate"))


def pytest_configure(config: pytest.Config) -> None:
    """In `make check`, the session's fork server (tests/processes.py), started by its first process: the workers
    it starts inherit the address, and fork their embedded runs' bridges."""
    if processes.FORK_SERVER in os.environ:
        processes.fork_embedded_bridges()
    elif budget.CHECK:
        directory = Path(tempfile.mkdtemp(prefix="lmconform-tests-"))
        server = processes.ForkServer(directory)
        os.environ[processes.FORK_SERVER] = server.address
        config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))
        config.add_cleanup(server.stop)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow start first. pytest-xdist hands the tests out in this order, and a test of seconds
    handed out last keeps the run waiting on its one worker when every other has finished: the tail of `make check`
    was the two vscodelm cancel runs and a draw of 400 requests, the last three tests of the collection. Marked are
    tests with no module fixture of their own to share (moved away from their module's other tests, a module fixture
    would be set up again for them).

    The modules marked `waits` are spread evenly among the others. In the order of their names they come close
    together (test_agents, test_bridge, test_bridge_faults), and make check's four workers on two cores then all
    wait at once on bridges and grace periods, a core idle for seconds; among modules that compute, a worker that
    waits leaves its core to another."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    waiting = [name for name, tests in modules.items() if tests[0].get_closest_marker("waits")]
    computing = [name for name in modules if name not in waiting]
    order = {name: (index + 1) / (len(computing) + 1) for index, name in enumerate(computing)}
    order.update({name: (index + 1) / (len(waiting) + 1) for index, name in enumerate(waiting)})
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, order[item.nodeid.split("::")[0]]))


@pytest.fixture(scope="module")
def server() -> Iterator[ReferenceServer]:
    """The clean reference server; faults are reached per request under /faults/NAME/v1."""
    with ReferenceServer() as running:
        yield running


@pytest.fixture(scope="module")
def client(server: ReferenceServer) -> Iterator[httpx.Client]:
    # A limit on the wait for an answer, reached only when the server failed: generous enough for a loaded runner.
    # A test whose proof is a timeout (the stall fault) sets its own.
    with httpx.Client(base_url=server.base_url, timeout=60) as http:
        yield http
