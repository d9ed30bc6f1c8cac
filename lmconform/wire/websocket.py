"""The Responses API's WebSocket mode, from the client's side: a socket opened on `/v1/responses`, messages sent one
at a time, and each answer read event by event until its terminal event (or an `error` event), with its arrival
times, as an exchange of its own.

What the upgrade was answered with is kept: a refusal (its HTTP status and body) is the server saying it does not
offer the mode; a 200 or anything that is not a WebSocket handshake is a broken upgrade. A socket that goes silent
for the read timeout, or closes before the answer's end, leaves the exchange with that error and no verdict of
success."""

from __future__ import annotations

import json
import shlex
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from lmconform.target import Target
from lmconform.wire.exchange import NOT_JSON, BodyChunk, Exchange, Request
from lmconform.wire.http import USER_AGENT

# How OpenAI's clients are told the mode is not there: Codex CLI stops trying on these (a 404, 426 Upgrade
# Required, 403).
REFUSAL_STATUSES = frozenset({403, 404, 426})
UPGRADED = 101
# The events that end an answer: a response's terminal events, and the `error` event of a refused message.
ENDS = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})


@dataclass(frozen=True)
class WebSocketRequest(Request):
    """A message sent on the `connection`-th socket a case opened (from 1)."""

    url: str
    body: Any
    connection: int = 1

    def reproduction(self) -> str:
        """websockets' own interactive client, with the message to paste once it is connected."""
        message = json.dumps(self.body, ensure_ascii=False)
        return f"python -m websockets {shlex.quote(self.url)}  # socket {self.connection}, then send: {message}"


@dataclass
class WebSocketExchange(Exchange):
    """One message and its answer: each text frame a chunk. `status` is what the upgrade was answered with (101 when
    the socket opened; the refusal's status otherwise, its body in `refusal`)."""

    status: int | None = None
    refusal: bytes = b""
    closed: str | None = None  # how the socket closed while the answer was awaited (its code and reason)
    # The socket went silent for the read timeout before the answer's end: no error of the transport, but an answer
    # that never ended, which the checks judge (a client such as Codex would wait on it).
    stalled: str | None = None
    frames: list[str] = field(default_factory=list)

    @property
    def upgraded(self) -> bool:
        return self.status == UPGRADED

    @property
    def refused(self) -> bool:
        """The upgrade was declined as OpenAI's API declines a mode it does not offer (or LM Studio's unknown
        route, whatever its status)."""
        if self.status in REFUSAL_STATUSES:
            return True
        return b"Unexpected endpoint or method" in self.refusal and self.status != UPGRADED

    @cached_property
    def events(self) -> list[Any]:
        """Each frame's JSON (NOT_JSON for a frame that is not)."""
        parsed = []
        for text in self.frames:
            try:
                parsed.append(json.loads(text))
            except ValueError:
                parsed.append(NOT_JSON)
        return parsed

    @property
    def types(self) -> list[Any]:
        return [event.get("type") if isinstance(event, dict) else None for event in self.events]

    @property
    def error_event(self) -> dict | None:
        """The `error` event's error object, when the message was refused so."""
        last = self.events[-1] if self.events else None
        if isinstance(last, dict) and last.get("type") == "error":
            error = last.get("error")
            return error if isinstance(error, dict) else {}
        return None

    @property
    def response(self) -> dict:
        """The response the terminal event carries ({} without one)."""
        last = self.events[-1] if self.events else None
        response = last.get("response") if isinstance(last, dict) else None
        return response if isinstance(response, dict) else {}

    @property
    def succeeded(self) -> bool:
        return self.upgraded and self.error is None and not self.stalled and self.types[-1:] == ["response.completed"]

    @property
    def status_text(self) -> str:
        if self.status is None:
            return self.error or "no answer"
        if not self.upgraded:
            return f"upgrade answered HTTP {self.status}"
        if self.error is not None or self.stalled is not None:
            return self.error or self.stalled or ""
        error = self.error_event
        if error is not None:
            return f"error event {error.get('code')}: {error.get('message')}"
        return f"{len(self.frames)} events, the last {self.types[-1] if self.types else None}"

    def body_excerpt(self, limit: int = 600) -> str:
        text = self.refusal.decode("utf-8", errors="replace") if not self.upgraded else "\n".join(self.frames)
        return text[:limit] + ("…" if len(text) > limit else "")


def socket_url(target: Target, path: str) -> str:
    url = target.url(path)
    return "ws" + url[4:] if url.startswith("http") else url


class WebSocketSession:
    """The sockets of one case: the first `send` opens one, and each `reconnect` a new one; a socket the server
    closed stays closed, and what is sent after is answered by nothing."""

    def __init__(self, target: Target, path: str) -> None:
        self.target = target
        self.url = socket_url(target, path)
        self.connection: ClientConnection | None = None
        self.sockets = ExitStack()  # every socket opened, closed with the session
        self.opened = 0
        self.given_up = "the server had closed the socket"  # why a socket no longer open is not written to
        self.upgrade: tuple[int | None, bytes, str | None] = (None, b"", None)

    def _open(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        self.opened += 1
        headers = {"User-Agent": USER_AGENT}
        if self.target.api_key:
            headers["Authorization"] = f"Bearer {self.target.api_key}"
        try:
            self.connection = self.sockets.enter_context(connect(
                self.url, additional_headers=headers, open_timeout=self.target.read_timeout,
                max_size=self.target.max_body_bytes, user_agent_header=None))
            self.upgrade = (UPGRADED, b"", None)
        except InvalidStatus as refused:
            self.upgrade = (refused.response.status_code, bytes(refused.response.body or b""), None)
        except InvalidHandshake as broken:
            self.upgrade = (None, b"", f"the upgrade was not answered with a WebSocket handshake: {broken}")
        except TimeoutError:
            self.upgrade = (None, b"", f"the upgrade was not answered in {self.target.read_timeout:g} s")
        except OSError as error:
            self.upgrade = (None, b"", f"cannot connect to {self.target.base_url}: {error}")

    def send(self, message: dict, reconnect: bool = False) -> WebSocketExchange:
        """Never raises for what the target does: a refusal, a silence or a close ends up in the exchange."""
        if reconnect or self.opened == 0:
            self._open()
        status, refusal, error = self.upgrade
        exchange = WebSocketExchange(WebSocketRequest(self.url, message, self.opened), status=status, refusal=refusal,
                                     max_body_bytes=self.target.max_body_bytes)
        if error is not None:
            exchange.error_kind, exchange.error = ("timeout" if "was not answered in" in error else "protocol"), error
        elif self.connection is None and status == UPGRADED:
            exchange.error_kind, exchange.error = "broken", f"not sent: {self.given_up}"
        if self.connection is None:
            return exchange
        started = time.monotonic()
        try:
            self.connection.send(json.dumps(message, ensure_ascii=False))
            while True:
                text = self.connection.recv(timeout=self.target.read_timeout)
                frame = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
                exchange.frames.append(frame)
                exchange.chunks.append(BodyChunk(time.monotonic() - started, frame.encode()))
                if exchange.types[-1] in ENDS:
                    break
                exchange.__dict__.pop("events", None)  # read again with the next frame
        except TimeoutError:
            exchange.stalled = f"no event for {self.target.read_timeout:g} s (read timeout) after {len(exchange.frames)}"
            self.given_up = "the socket was given up after a silence"
            self.connection.close()
            self.connection = None
        except ConnectionClosed as closed:
            exchange.error_kind = "broken"
            exchange.closed = f"{closed.rcvd.code} {closed.rcvd.reason}".strip() if closed.rcvd else "without a code"
            exchange.error = f"the socket closed ({exchange.closed}) after {len(exchange.frames)} events"
            self.given_up = "the server had closed the socket"
            self.connection = None
        exchange.__dict__.pop("events", None)
        exchange.duration_s = time.monotonic() - started
        return exchange

    def close(self) -> None:
        self.connection = None
        self.sockets.close()
