"""Small HTTP servers of the standard library's kind, for tests whose server must answer as no real one does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# `shutdown` waits for the serving loop to look at its flag, once a poll: the standard library's half second,
# waited out by every test that stops one, would be most of what these tests take.
_POLL_SECONDS = 0.01


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` answering on a free loopback port until the block ends; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(_POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
