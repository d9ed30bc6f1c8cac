"""Running the reference server: in a background thread for tests and suites, or in the foreground for
`lmconform serve`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette

from lmconform.reference.app import create_app
from lmconform.reference.faults import parse_faults
from lmconform.reference.raw import LendingProtocol
from lmconform.reference.store import DEFAULT_STORE_SIZE
from lmconform.reference.streams import DEFAULT_PAUSE_S

# Streams held open on purpose end as soon as the server stops; this only bounds a client that stops reading.
_GRACEFUL_SHUTDOWN_SECONDS = 1
_START_TIMEOUT_SECONDS = 60.0  # a loaded CI runner can be slow to start a thread; a thread that died is seen at once
_TICK_SECONDS = 0.1  # uvicorn's tick, which renews the Date header every tenth
_DRAIN_POLL_SECONDS = 0.002


class _Server(uvicorn.Server):
    """uvicorn's server, stopping at once. uvicorn looks at `should_exit` every 0.1 s, then sleeps 0.1 s more and
    polls its connections every 0.1 s: a fifth of a second a stop, and the tests stop a server hundreds of times a run.
    Here `request_exit` wakes the loop, and the shutdown polls every few milliseconds; it calls `on_stop` first, so
    that the reference server's streams held open on purpose end instead of waiting out the graceful timeout. (uvicorn's
    own shutdown ends by telling the app's lifespan, which _config turns off.)"""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_stop = on_stop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # Before `started` is set, so that a stop always finds the loop to wake.
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        await super().startup(sockets)

    async def main_loop(self) -> None:
        assert self._wake is not None
        counter = 0
        while not await self.on_tick(counter):  # uvicorn's tick keeps the Date header current
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), _TICK_SECONDS)

    def request_exit(self) -> None:
        """From any thread."""
        self.should_exit = True
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                self._loop.call_soon_threadsafe(self._wake.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._on_stop()
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            await asyncio.wait_for(self._drained(), _GRACEFUL_SHUTDOWN_SECONDS)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel()

    async def _drained(self) -> None:
        while (self.server_state.connections or self.server_state.tasks) and not self.force_exit:
            await asyncio.sleep(_DRAIN_POLL_SECONDS)
        for server in self.servers:
            await server.wait_closed()


def _config(app: Starlette, **options: Any) -> uvicorn.Config:
    """uvicorn's HTTP/1.1 protocol lending each request's socket to the app: the faults of the transport write on it
    (lmconform.reference.raw)."""
    return uvicorn.Config(app, lifespan="off", timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
                          http=LendingProtocol, **options)


def _listening_socket(host: str, port: int) -> socket.socket:
    """Bound before uvicorn starts, so the port is known at once. The protocol is named explicitly: asyncio sets
    TCP_NODELAY on accepted connections only when the listening socket says IPPROTO_TCP, and without it every
    streamed answer waits on Nagle's algorithm and a delayed ACK (about 40 ms a request on loopback)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


class BackgroundServer:
    """An ASGI app on a loopback port, in a background thread.

        with BackgroundServer(app) as server:
            httpx.get(server.base_url + "/v1/models")
    """

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0, name: str = "server",
                 on_stop: Callable[[], None] = lambda: None) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.name = name
        self._on_stop = on_stop
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """Without `/v1`, as a user would type it for LM Studio."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> Self:
        if self._thread is not None:
            raise RuntimeError(f"the {self.name} is already running")
        sock = _listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        # uvicorn's own logging config would reconfigure the host process's logging; warnings still reach stderr.
        config = _config(self.app, log_config=None, log_level="warning", access_log=False)
        self._server = _Server(config, self._on_stop)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"{self.name}-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                self.stop()
                raise RuntimeError(f"the {self.name} did not start on {self.base_url}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.request_exit()
        self._thread.join()
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


class ReferenceServer(BackgroundServer):
    """The reference server on a loopback port, in a background thread.

        with ReferenceServer() as server:
            httpx.get(server.base_url + "/v1/models")
    """

    def __init__(self, faults: Iterable[str] = (), host: str = "127.0.0.1", port: int = 0,
                 store_size: int = DEFAULT_STORE_SIZE, stream_pause: float = DEFAULT_PAUSE_S) -> None:
        app = create_app(parse_faults(faults), store_size, stream_pause)
        super().__init__(app, host, port, name="reference server", on_stop=app.state.stopping.set)


def serve_forever(host: str, port: int, faults: Iterable[str] = (), store_size: int = DEFAULT_STORE_SIZE,
                  stream_pause: float = DEFAULT_PAUSE_S) -> None:
    """Serve in the foreground with uvicorn's console logging, until interrupted. The socket is bound first, so an
    address that cannot be listened on (in use, a name that does not resolve) raises OSError here: uvicorn would
    log it and exit with status 3, which lmconform's commands give an unreachable target."""
    app = create_app(parse_faults(faults), store_size, stream_pause)
    sock = _listening_socket(host, port)
    config = _config(app, host=host, port=sock.getsockname()[1])
    shown_host = f"[{host}]" if ":" in host else host
    # uvicorn says where it listens only on the sockets it binds itself.
    logging.getLogger("uvicorn.error").info("lmconform reference server on http://%s:%d (Ctrl+C stops it)",
                                            shown_host, config.port)
    _Server(config, app.state.stopping.set).run(sockets=[sock])
