"""Recording in front of a real server: each request passed to a server on this machine, its answer streamed back
unchanged, so the recorder keeps what a client sends to it."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from lmconform.record.kept import LABEL_HEADER
from lmconform.target import normalize_base_url
from lmconform.wire.http import HOP_HEADERS

_UPSTREAM_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)


class Upstream:
    """Passes each request to a server on this machine and streams its answer back unchanged."""

    def __init__(self, base_url: str) -> None:
        self.base_url = loopback_base_url(base_url)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await request.body()
        headers = {name: value for name, value in request.headers.items()
                   if name.lower() not in HOP_HEADERS | {LABEL_HEADER}}
        headers["accept-encoding"] = "identity"  # the recorder reads the answer for the response id it carries
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.base_url + request.url.path + (f"?{query}" if query else "")
        started = False
        try:
            async with httpx.AsyncClient(timeout=_UPSTREAM_TIMEOUT) as client:
                async with client.stream(request.method, url, headers=headers, content=body) as response:
                    passed = [(name.encode("latin-1"), value.encode("latin-1"))
                              for name, value in response.headers.items()
                              if name.lower() not in HOP_HEADERS - {"content-length"}]
                    await send({"type": "http.response.start", "status": response.status_code, "headers": passed})
                    started = True
                    async for piece in response.aiter_raw():
                        await send({"type": "http.response.body", "body": piece, "more_body": True})
        except httpx.HTTPError as error:
            if not started:
                answer = JSONResponse({"error": f"the upstream {self.base_url} did not answer: {error}"}, 502)
                await answer(scope, receive, send)
                return
            # Cut off mid-answer: the client sees the answer end where the upstream's did.
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def loopback_base_url(url: str) -> str:
    """`url` without `/v1`, when it names a server on this machine; recording never sends traffic elsewhere."""
    base = normalize_base_url(url)
    host = urlsplit(base).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"--upstream must be a server on this machine (127.0.0.1, ::1 or localhost), not {url!r}")
    return base
