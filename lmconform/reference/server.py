"""Running the reference server: in a background thread for tests and suites, or in the foreground for
`lmconform serve`."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterable
from types import TracebackType

import uvicorn
from starlette.applications import Starlette

from lmconform.reference.app import create_app
from lmconform.reference.faults import parse_faults
from lmconform.reference.raw import LendingProtocol
from lmconform.reference.store import DEFAULT_STORE_SIZE
from lmconform.reference.streams import DEFAULT_PAUSE_S

# Streams held open on purpose end as soon as the server stops; this only bounds a client that stops reading.
_GRACEFUL_SHUTDOWN_SECONDS = 1
_START_TIMEOUT_SECONDS = 10.0


class _Server(uvicorn.Server):
    """uvicorn waits for open responses before it stops; tell the app first, so held-open streams end."""

    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self._app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._app.state.stopping.set()
        await super().shutdown(sockets)


def _config(app: Starlette, **options: object) -> uvicorn.Config:
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


class ReferenceServer:
    """The reference server on a loopback port, in a background thread.

        with ReferenceServer() as server:
            httpx.get(server.base_url + "/v1/models")
    """

    def __init__(self, faults: Iterable[str] = (), host: str = "127.0.0.1", port: int = 0,
                 store_size: int = DEFAULT_STORE_SIZE, stream_pause: float = DEFAULT_PAUSE_S) -> None:
        self.app = create_app(parse_faults(faults), store_size, stream_pause)
        self.host = host
        self.port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """Without `/v1`, as a user would type it for LM Studio."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> ReferenceServer:
        if self._thread is not None:
            raise RuntimeError("the reference server is already running")
        sock = _listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        # uvicorn's own logging config would reconfigure the host process's logging; warnings still reach stderr.
        config = _config(self.app, log_config=None, log_level="warning", access_log=False)
        self._server = _Server(config, self.app)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"lmconform-reference-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                self.stop()
                raise RuntimeError(f"the reference server did not start on {self.base_url}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join()
        self._server = self._thread = None

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


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
    _Server(config, app).run(sockets=[sock])
