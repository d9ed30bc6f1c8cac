"""The reference server's ASGI application driven in this process: no socket, and every body message the
application sends is kept as one read, exactly as written (the capture over TCP keeps what the network delivered).
Hundreds of generated answers a second instead of tens."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette

from lmconform.reference import create_app
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

HOST = "http://reference.invalid"


class InProcess:
    """`send(path, body)` returns the HttpExchange a transport would have captured."""

    def __init__(self, app: Starlette | None = None) -> None:
        self.app = app or create_app(stream_pause=0)
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.loop.close()

    def send(self, path: str, body: Any) -> HttpExchange:
        raw = json.dumps(body, ensure_ascii=False).encode()
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
                 "headers": [(b"content-type", b"application/json"), (b"host", b"reference.invalid")],
                 "client": ("127.0.0.1", 1), "server": ("reference.invalid", 80)}
        requested = False
        messages: list[dict] = []

        async def receive() -> dict:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": raw, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            messages.append(message)

        self.loop.run_until_complete(self.app(scope, receive, send))
        start = messages[0]
        exchange = HttpExchange(HttpRequest("POST", HOST + path, {"Content-Type": "application/json"}, body),
                                status=start["status"],
                                headers={name.decode().lower(): value.decode() for name, value in start["headers"]})
        exchange.chunks = [BodyChunk(0.0, message["body"]) for message in messages[1:] if message.get("body")]
        return exchange
