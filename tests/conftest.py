"""Fixtures the project's own tests share."""

from collections.abc import Iterator

import httpx
import pytest

from lmconform.reference import ReferenceServer


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


# pytest-xdist hands its workers the groups first, largest first, then single tests in the order collected. The run
# under another CPU variant is a group of one test that takes ten minutes: collected where its module stands, it was
# handed out last and ran alone at the end of `make test`. Collected first, it starts with the other long groups.
STARTED_FIRST = frozenset({"test_the_llama_server_expectations_hold_under_another_cpu_variant"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: getattr(item, "originalname", item.name) not in STARTED_FIRST)
