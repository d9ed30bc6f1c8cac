"""The relay an agent talks to: a loopback HTTP server started for one agent run, whose every request is sent on to
the target through lmconform's own capture (lmconform.wire.http: each read kept with its time, the caps, the read
timeout, the key redacted) and whose answer is passed back to the agent read by read, as it arrives, so the agent
sees a stream as the target sends it, not a whole answer held back.

The agent is given a dummy key; the relay sends the target's own (the agent's credentials never reach the
target). The path and query are kept as the agent sent them (`/v1/messages?beta=true`). Each request is kept as an
`HttpExchange`, in the order the agent sent them. Past `limit` requests the relay stops forwarding: the next
request is refused, and the run is over as a loop.

An upgrade to a WebSocket (Codex in the Responses API's WebSocket mode) is passed on to the target as it is asked
and answered, and the socket's bytes both ways as they come: the relay keeps what the upgrade was answered with (a
`WebSocketExchange` with the status, and the refusal's body), not the messages, which only the agent and the target
read. The matrix judges such a run by what the agent did.

With an `alias`, the agent asks for a model id the target does not serve (Claude Code's `claude-*` id): the relay
sends the target's own model id in its place in a JSON body's `model`, as a server serving its model under that
alias (LiteLLM's `model_name`, LM Studio's identifier) takes it; the exchange keeps the body the target got.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from lmconform.target import Target
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HOP_HEADERS, send
from lmconform.wire.redact import SECRET_HEADERS
from lmconform.wire.websocket import UPGRADED, WebSocketExchange, WebSocketRequest, socket_url

# The agent's key is a dummy that never leaves the machine: it is what `AGENT_KEY` says.
AGENT_KEY = "sk-lmconform-relay"
LOOPBACK = "127.0.0.1"  # the relay listens for the agent on this machine only

# Headers of the hop between the agent and the relay (or the relay and the target), not of the request or answer;
# the answer's content-encoding too, since the capture decodes the body the relay passes on.
RELAYED_NOT = HOP_HEADERS | {"content-encoding"}
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024  # an upgrade's answer head: its status line and headers
TUNNEL_READ = 64 * 1024
SHUTDOWN_POLL_S = 0.02


class Relay:
    """`with Relay(target, limit) as relay:` the agent's base URL is `relay.base_url`; afterwards
    `relay.exchanges` holds what was relayed, and `relay.limit_reached` whether the agent asked for more."""

    def __init__(self, target: Target, limit: int, alias: str | None = None) -> None:
        self.target = target
        self.limit = limit
        self.alias = alias if target.model and alias != target.model else None
        self.requests = 0  # every request the agent sent, the refused one past the limit included
        self.limit_reached = threading.Event()
        self._exchanges: list[tuple[int, Exchange]] = []
        self._lock = threading.Lock()
        self._server = _Server((LOOPBACK, 0), _handler(self))
        # Closing waits for every exchange in flight to be kept (socketserver joins only threads that are not
        # daemons); each ends within the target's read timeout.
        self._server.daemon_threads = False
        self._server.block_on_close = True
        # The server looks whether it is to stop this often: it is stopped as the run ends, and a run is seconds.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(SHUTDOWN_POLL_S,),
                                        name="lmconform-relay", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_port}"

    @property
    def exchanges(self) -> tuple[Exchange, ...]:
        with self._lock:
            return tuple(exchange for _, exchange in sorted(self._exchanges, key=lambda pair: pair[0]))

    def __enter__(self) -> Relay:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def admit(self) -> int | None:
        """The number of a new request, or None when it is past the limit (the run then ends as a loop)."""
        with self._lock:
            if self.limit_reached.is_set():
                return None  # the run is over: what the agent sends while it is being stopped is not counted
            self.requests += 1
            if self.requests > self.limit:
                self.limit_reached.set()
                return None
            return self.requests

    def keep(self, number: int, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append((number, exchange))


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """An agent that hangs up (it was stopped, or gave up on an answer) is no error of the relay's: the
        exchange it left is kept all the same."""


def _handler(relay: Relay) -> type[BaseHTTPRequestHandler]:
    class Handler(_RelayHandler):
        pass

    Handler.relay = relay
    return Handler


class _RelayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked answers, as the agents' HTTP clients expect
    relay: Relay

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass  # the exchanges are the log

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._relay()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def _relay(self) -> None:
        upgrade = self.headers.get("upgrade", "").lower() == "websocket"
        body = b"" if upgrade else self._body()
        number = self.relay.admit()
        if number is None:
            self._refuse(503, f"lmconform stopped relaying after {self.relay.limit} requests of this agent run")
            return
        if upgrade:
            self._tunnel(number)
            return
        forwarded = {name.lower(): value for name, value in self.headers.items()
                     if name.lower() not in RELAYED_NOT and name.lower() not in SECRET_HEADERS}
        try:
            shown = json.loads(body) if body else None
        except ValueError:  # kept as the text it is, and sent as the bytes it was
            shown = body.decode("utf-8", errors="replace")
        if isinstance(shown, dict) and self.relay.alias is not None and shown.get("model") == self.relay.alias:
            shown = {**shown, "model": self.relay.target.model}
            body = json.dumps(shown).encode()
        answer = _Answer(self)
        exchange = send(self.relay.target, self.command, self.path, shown, body or None, forwarded=forwarded,
                        listener=answer)
        self.relay.keep(number, exchange)
        if not answer.started:
            self._refuse(502, f"lmconform's relay got no answer from the target: {exchange.error or 'none'}")
        elif exchange.error or exchange.truncated:
            self.close_connection = True  # the answer was cut: the agent sees it end as the target ended it
        else:
            answer.finish()

    def _tunnel(self, number: int) -> None:
        """The agent's upgrade sent to the target as asked (the target's key in place of the agent's), its answer
        passed back, and once upgraded the socket's bytes both ways until either side closes."""
        self.close_connection = True  # the connection is the socket's now, or was refused
        target = self.relay.target
        url = urlsplit(target.url(self.path))
        exchange = WebSocketExchange(WebSocketRequest(socket_url(target, self.path), None))
        self.relay.keep(number, exchange)
        headers = [(name, value) for name, value in self.headers.items()
                   if name.lower() not in SECRET_HEADERS and name.lower() != "host"]
        headers.append(("Host", url.netloc))
        if target.api_key:
            headers.append(("Authorization", f"Bearer {target.api_key}"))
        head = f"GET {url.path}{'?' + url.query if url.query else ''} HTTP/1.1\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in headers) + "\r\n"
        try:
            upstream = socket.create_connection((url.hostname, url.port or 80), timeout=target.read_timeout)
        except OSError as error:
            exchange.error_kind, exchange.error = "connect", f"cannot connect to {target.base_url}: {error}"
            self._refuse(502, f"lmconform's relay got no answer from the target: {exchange.error}")
            return
        with upstream:
            try:
                upstream.sendall(head.encode("latin-1"))
                answer = _read_head(upstream)
            except OSError as error:
                exchange.error_kind, exchange.error = "broken", f"the upgrade got no answer: {error}"
                self._refuse(502, f"lmconform's relay got no answer from the target: {exchange.error}")
                return
            status_line = answer.split(b"\r\n", 1)[0].split()
            exchange.status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else None
            if exchange.status != UPGRADED:
                exchange.refusal = _refusal_body(upstream, answer)
                self.wfile.write(answer.partition(b"\r\n\r\n")[0] + b"\r\n\r\n" + exchange.refusal)
                self.wfile.flush()
                return
            self.wfile.write(answer)
            self.wfile.flush()
            upstream.settimeout(None)  # an open socket may stay quiet between turns for as long as the agent likes
            _pipe(self.connection, upstream)

    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            received = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(received)
                received += self.rfile.read(size)
                self.rfile.readline()
                if len(received) > MAX_REQUEST_BYTES:
                    self.close_connection = True
                    return bytes(received)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(min(length, MAX_REQUEST_BYTES)) if length else b""

    def _refuse(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"message": message, "type": "lmconform_relay"}}).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True


class _Answer:
    """The target's answer passed on to the agent as it arrives, in chunked transfer coding (its length is not
    known until it ends). An agent that hangs up is no reason to stop keeping what the target sends."""

    def __init__(self, handler: _RelayHandler) -> None:
        self.handler = handler
        self.started = False
        self.gone = False

    def start(self, status: int, headers: dict[str, str]) -> None:
        self.started = True
        self._write(lambda: self._head(status, headers))

    def read(self, data: bytes) -> None:
        if data:
            self._write(lambda: self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data)))

    def finish(self) -> None:
        self._write(lambda: self.handler.wfile.write(b"0\r\n\r\n"))

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.handler.send_response_only(status)
        for name, value in headers.items():
            if name not in RELAYED_NOT and name not in ("date", "server"):
                self.handler.send_header(name, value)
        self.handler.send_header("Date", self.handler.date_time_string(time.time()))
        self.handler.send_header("Transfer-Encoding", "chunked")
        self.handler.end_headers()

    def _write(self, write) -> None:
        if self.gone:
            return
        try:
            write()
            self.handler.wfile.flush()
        except OSError:
            self.gone = True
            self.handler.close_connection = True


def _read_head(upstream: socket.socket) -> bytes:
    """An HTTP answer's head, its status line and headers, with whatever of its body came with them."""
    received = bytearray()
    while b"\r\n\r\n" not in received and len(received) < MAX_HEAD_BYTES:
        data = upstream.recv(TUNNEL_READ)
        if not data:
            break
        received += data
    return bytes(received)


def _refusal_body(upstream: socket.socket, answer: bytes) -> bytes:
    """A refused upgrade's body: as long as its head says, or until the target closes or falls silent."""
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                   if line.lower().startswith(b"content-length:") and line.split(b":", 1)[1].strip().isdigit()), None)
    received = bytearray(body)
    try:
        while (length is None or len(received) < length) and len(received) < MAX_HEAD_BYTES:
            data = upstream.recv(TUNNEL_READ)
            if not data:
                break
            received += data
    except OSError:
        pass  # what came before the silence is the body
    return bytes(received[:length] if length is not None else received)


def _pipe(agent: socket.socket, upstream: socket.socket) -> None:
    """Each side's bytes to the other until either closes."""
    def copy(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(TUNNEL_READ):
                sink.sendall(data)
        except OSError:
            pass  # either side hung up: the run has ended or the socket closed
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    back = threading.Thread(target=copy, args=(upstream, agent), name="lmconform-relay-socket", daemon=True)
    back.start()
    copy(agent, upstream)
    back.join()
