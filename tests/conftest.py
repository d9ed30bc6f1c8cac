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
