"""Send one request and keep every byte of the answer with its arrival time."""

from __future__ import annotations

import atexit
import json
import time
from typing import Any

import httpx

from lmconform import __version__
from lmconform.target import Target
from lmconform.wire.exchange import BodyChunk, Exchange, Request
from lmconform.wire.redact import redact_headers

USER_AGENT = f"lmconform/{__version__}"


_CLIENTS: dict[float, httpx.Client] = {}


def _client(read_timeout: float) -> httpx.Client:
    """One client per timeout: building a client loads TLS certificates, which costs more than a request to a local
    server, and the fuzzer and chain checks send thousands. No connection is kept alive between exchanges: each
    exchange stands alone, as its curl does, and a connection a crashing server dropped is never reused."""
    if read_timeout not in _CLIENTS:
        _CLIENTS[read_timeout] = httpx.Client(
            timeout=httpx.Timeout(connect=10.0, read=read_timeout, write=10.0, pool=10.0),
            limits=httpx.Limits(max_keepalive_connections=0),
        )
    return _CLIENTS[read_timeout]


@atexit.register
def _close_clients() -> None:
    for client in _CLIENTS.values():
        client.close()


def send(target: Target, method: str, path: str, body: Any = None, raw_body: str | None = None) -> Exchange:
    """Never raises for what the target does: refusals, timeouts and broken streams end up in `Exchange.error`."""
    headers = {"User-Agent": USER_AGENT}
    content: bytes | None = None
    if raw_body is not None:
        content = raw_body.encode()
        headers["Content-Type"] = "application/json"
    elif body is not None:
        content = json.dumps(body, ensure_ascii=False).encode()
        headers["Content-Type"] = "application/json"
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"
    url = target.url(path)
    shown_body = body if raw_body is None else raw_body
    exchange = Exchange(
        request=Request(method, url, redact_headers(headers), shown_body), max_body_bytes=target.max_body_bytes
    )
    started = time.monotonic()
    received = 0
    try:
        with _client(target.read_timeout).stream(method, url, headers=headers, content=content) as response:
            exchange.status = response.status_code
            exchange.headers = {name.lower(): value for name, value in response.headers.items()}
            for data in response.iter_bytes():
                now = time.monotonic() - started
                room = target.max_body_bytes - received
                exchange.chunks.append(BodyChunk(now, data[:room]))
                received += min(len(data), room)
                if received >= target.max_body_bytes:
                    exchange.truncated = True
                    break
                if now > target.deadline:
                    exchange.error_kind = "deadline"
                    exchange.error = f"the answer was still arriving after {target.deadline:g} s"
                    break
    except httpx.ConnectError as error:
        exchange.error_kind, exchange.error = "unreachable", f"cannot connect to {target.base_url}: {error}"
    except httpx.TimeoutException:
        exchange.error_kind = "timeout"
        exchange.error = f"no bytes for {target.read_timeout:g} s (read timeout) after {received} bytes"
    except httpx.HTTPError as error:
        exchange.error_kind, exchange.error = "protocol", f"{type(error).__name__}: {error}"
    exchange.duration_s = time.monotonic() - started
    return exchange
