"""The HTTP transport: send one request and keep every byte of the answer with its arrival time, its status and
headers, and its reading as an event stream or a JSON document."""

from __future__ import annotations

import atexit
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import httpx

from lmconform import __version__
from lmconform.target import Target
from lmconform.wire.collector import collector_paused
from lmconform.wire.exchange import BROKEN, NOT_JSON, BodyChunk, Exchange, Request
from lmconform.wire.redact import curl_command, redact_headers
from lmconform.wire.sse import SSEStream, parse_sse

USER_AGENT = f"lmconform/{__version__}"
# Answers that mean "this route does not exist". LM Studio says so with HTTP 200 and an error string.
MISSING_ROUTE_STATUSES = frozenset({404, 405, 501})
LMSTUDIO_UNKNOWN_ROUTE = "Unexpected endpoint or method"
# Headers of the hop (framing, the connection, what the transport negotiates), not of the message a client sent: a
# relay or a recorder leaves them to its own transport.
HOP_HEADERS = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade",
                         "proxy-connection", "accept-encoding", "expect"})


@dataclass(frozen=True)
class HttpRequest(Request):
    method: str
    url: str
    headers: dict[str, str]  # redacted
    body: Any | None = None

    def reproduction(self) -> str:
        return self.curl()

    def curl(self) -> str:
        return self._curl

    @cached_property
    def _curl(self) -> str:
        # Built once: every verdict on the exchange carries it, and a generated request is judged by dozens of checks.
        return curl_command(self.method, self.url, self.headers, self.body)


@dataclass
class HttpExchange(Exchange):
    request: HttpRequest  # the base's field, narrowed
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def status_text(self) -> str:
        return f"HTTP {self.status}"

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def is_event_stream(self) -> bool:
        return self.content_type == "text/event-stream"

    @cached_property
    def sse(self) -> SSEStream:
        """The body read as an event stream, fed read by read as the network delivered it."""
        return parse_sse(chunk.data for chunk in self.chunks)

    @cached_property
    def payloads(self) -> list[Any]:
        """Each event's data parsed as JSON (`NOT_JSON` when it is none), in the order of `sse.events`: decoded once
        for every normaliser and check that reads them, since decoding is most of what reading a long stream costs."""
        decode, payloads = json.loads, []
        with collector_paused():
            for data in self.sse.events.datas():  # no event is made for it
                try:
                    payloads.append(decode(data))
                except ValueError:
                    payloads.append(NOT_JSON)
        return payloads

    @cached_property
    def json(self) -> Any:
        """The body parsed as JSON, or `NOT_JSON` when it is not a JSON document."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return NOT_JSON


def over_http(exchange: Exchange) -> HttpExchange:
    """`exchange` as the HttpExchange it is, for what reads what only HTTP has (a status, headers) of an answer only
    HTTP gives (a feature's probe, an optional API's); any other is a mistake in the code that asks."""
    if not isinstance(exchange, HttpExchange):
        raise TypeError(f"an exchange over HTTP was expected, not a {type(exchange).__name__}")
    return exchange


def route_missing(exchange: HttpExchange) -> bool:
    if exchange.status in MISSING_ROUTE_STATUSES:
        return True
    error = exchange.json.get("error") if isinstance(exchange.json, dict) else None
    return isinstance(error, str) and error.startswith(LMSTUDIO_UNKNOWN_ROUTE)


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


class Listener(Protocol):
    """Someone the answer is passed on to as it arrives (a client lmconform relays for): its status and headers,
    then each read."""

    def start(self, status: int, headers: dict[str, str]) -> None: ...

    def read(self, data: bytes) -> None: ...


def send(target: Target, method: str, path: str, body: Any = None, raw_body: str | bytes | None = None,
         forwarded: dict[str, str] | None = None, listener: Listener | None = None) -> HttpExchange:
    """Never raises for what the target does: refusals, timeouts and broken streams end up in `Exchange.error`.
    A relayed request brings its client's own headers (`forwarded`, which take the place of lmconform's) and its
    body as the client sent it (`raw_body`, with `body` its JSON for the record); `listener` is given the answer
    read by read, as it is kept."""
    headers = {"User-Agent": USER_AGENT}
    content: bytes | None = None
    if raw_body is not None:
        content = raw_body if isinstance(raw_body, bytes) else raw_body.encode()
        headers["Content-Type"] = "application/json"
    elif body is not None:
        content = json.dumps(body, ensure_ascii=False).encode()
        headers["Content-Type"] = "application/json"
    if forwarded:
        headers = {name: value for name, value in headers.items() if name.lower() not in
                   {other.lower() for other in forwarded}} | forwarded
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"
    url = target.url(path)
    shown_body = body if raw_body is None or body is not None else raw_body
    exchange = HttpExchange(
        request=HttpRequest(method, url, redact_headers(headers), shown_body), max_body_bytes=target.max_body_bytes
    )
    started = time.monotonic()
    received = 0
    try:
        # Every read is kept (its bytes and arrival time): see lmconform.wire.collector.
        with collector_paused(), _client(target.read_timeout).stream(method, url, headers=headers,
                                                                     content=content) as response:
            exchange.status = response.status_code
            exchange.headers = {name.lower(): value for name, value in response.headers.items()}
            if listener is not None:
                listener.start(exchange.status, exchange.headers)
            for data in response.iter_bytes():
                now = time.monotonic() - started
                room = target.max_body_bytes - received
                exchange.chunks.append(BodyChunk(now, data[:room]))
                if listener is not None:
                    listener.read(data[:room])
                received += min(len(data), room)
                if received >= target.max_body_bytes:
                    exchange.truncated = True
                    break
                if now > target.answer_deadline:
                    exchange.error_kind = "deadline"
                    exchange.error = f"the answer was still arriving after {target.answer_deadline:g} s"
                    break
    except httpx.ConnectError as error:
        exchange.error_kind, exchange.error = "unreachable", f"cannot connect to {target.base_url}: {error}"
    except httpx.TimeoutException:
        exchange.error_kind = "timeout"
        exchange.error = f"no bytes for {target.read_timeout:g} s (read timeout) after {_arrived(exchange)}"
    except httpx.HTTPError as error:
        exchange.error_kind, exchange.error = _broken(error, exchange)
    exchange.duration_s = time.monotonic() - started
    return exchange


# h11's words for a body that ended before its framing said it would: "(received 1331 bytes, expected 1363)"
_SHORT_OF_LENGTH = re.compile(r"received (\d+) bytes, expected (\d+)")


def _arrived(exchange: HttpExchange) -> str:
    """What had arrived, as a user counts it: the events of a stream, the bytes of any answer."""
    received = len(exchange.body)
    if exchange.is_event_stream:
        events = len(exchange.sse.events)
        return f"{events} event{'s' * (events != 1)} ({received} bytes)"
    return f"{received} bytes" if exchange.status is not None else "nothing"


def _broken(error: httpx.HTTPError, exchange: HttpExchange) -> tuple[str, str]:
    """Why the answer stopped, in a user's words: the kind of error ("broken" when the server ended the connection
    before the end of the body) and what happened."""
    text = str(error)
    if isinstance(error, httpx.ReadError) and "reset" in text.lower():
        return BROKEN, f"the server reset the connection after {_arrived(exchange)}"
    short = _SHORT_OF_LENGTH.search(text)
    if short is not None:
        return BROKEN, (f"the server closed the connection after {short[1]} of the {short[2]} bytes its "
                          "Content-Length announced")
    if isinstance(error, httpx.RemoteProtocolError) and "peer closed" in text:
        return BROKEN, f"the server closed the connection in the middle of the body, after {_arrived(exchange)}"
    return "protocol", f"{type(error).__name__}: {error}"


class HttpTransport:
    """Each request on a connection of its own: nothing is shared between the requests of a case."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def send(self, method: str, path: str | None, body: Any = None, raw_body: str | None = None,
             headers: Mapping[str, str] | None = None) -> HttpExchange:
        # A case's own headers take the place of lmconform's of the same name, as a relayed client's do.
        return send(self.target, method, path or "", body, raw_body, forwarded=dict(headers) if headers else None)

    def close(self) -> None:
        """Nothing to end: the connection of each request was closed with its answer."""
