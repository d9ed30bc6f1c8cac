"""Four small proxies, each with one defect of the kind proxies are known to have in their SSE handling, for the
stream fuzzing to find and shrink to its cause. Each forwards every request to its upstream as it is and re-frames
a streamed answer event by event (`data: …` then a blank line, as most proxies write their own stream), reading
the upstream's body read by read as the network delivers it:

- `lf_only`: ends lines at LF alone, so a CR stays in the line and a CRLF or CR blank line never ends an event;
- `per_read_utf8`: decodes each read as UTF-8 on its own, so a character split between two reads is lost;
- `drops_cr`: deletes every CR byte, so a line ended by CR alone runs into the next;
- `merges_at_comments`: drops comment lines together with a blank line right after one (a keep-alive block
  vanishes whole), so an event whose blank line follows a comment runs into the next.

And one as the proxy gate sees a proxy (`routing_app`): a model name per fault of its upstream, and a defect of its
own under one of them.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from lmconform.reference.server import BackgroundServer


class Reframer:
    """A correct event-stream reader that re-frames: lines at CR, LF or CRLF however the reads fall, decoded
    whole, comments dropped, each event written as one `data:` line per line of its data."""

    def __init__(self) -> None:
        self.pending = b""
        self.data: list[str] = []
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def text_of(self, read: bytes) -> str:
        return self.decoder.decode(read)

    def lines(self, text: str) -> Iterator[str]:
        self.pending += text.encode()
        while True:
            found = re.search(rb"\r\n|\r(?=[^\n])|\n", self.pending)
            if found is None:  # no line end yet, or a CR that may be the first half of a CRLF
                return
            line, self.pending = self.pending[:found.start()], self.pending[found.end():]
            yield line.decode()

    def line(self, line: str) -> bytes:
        if not line:
            out = "".join(f"data: {value}\n" for value in self.data) + "\n" if self.data else ""
            self.data = []
            return out.encode()
        if line.startswith(":"):
            return b""
        name, _, value = line.partition(":")
        if name == "data":
            self.data.append(value[1:] if value.startswith(" ") else value)
        return b""

    def feed(self, read: bytes) -> bytes:
        return b"".join(self.line(line) for line in self.lines(self.text_of(read)))

    def close(self) -> bytes:
        tail = b"".join(self.line(line) for line in self.lines(self.decoder.decode(b"", final=True) + "\n"))
        return tail + self.line("")


class LfOnly(Reframer):
    def lines(self, text: str) -> Iterator[str]:
        self.pending += text.encode()
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            yield line.decode()


class PerReadUtf8(Reframer):
    def text_of(self, read: bytes) -> str:
        return read.decode("utf-8", errors="replace")


class DropsCr(Reframer):
    def text_of(self, read: bytes) -> str:
        return super().text_of(read.replace(b"\r", b""))


class MergesAtComments(Reframer):
    def __init__(self) -> None:
        super().__init__()
        self.after_comment = False

    def line(self, line: str) -> bytes:
        if line.startswith(":"):
            self.after_comment = True
            return b""
        if not line and self.after_comment:
            self.after_comment = False
            return b""
        self.after_comment = False
        return super().line(line)


PROXIES: dict[str, Callable[[], Reframer]] = {
    "lf-only": LfOnly, "per-read-utf8": PerReadUtf8, "merges-at-comments": MergesAtComments, "drops-cr": DropsCr,
    "correct": Reframer,
}


def proxy_app(upstream: str, reframer: Callable[[], Reframer]) -> Starlette:
    client = httpx.AsyncClient(timeout=30)

    async def forward(request: Request) -> Response:
        sent = client.build_request(request.method, upstream + request.url.path, content=await request.body(),
                                    headers={"content-type": request.headers.get("content-type", "application/json"),
                                             # they forward the bytes as read: an encoded body would need decoding
                                             "accept-encoding": "identity"})
        answer = await client.send(sent, stream=True)
        kind = answer.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            body = await answer.aread()
            await answer.aclose()
            return Response(body, status_code=answer.status_code, media_type=kind or None)

        async def reframed() -> AsyncIterator[bytes]:
            reading = reframer()
            try:
                async for read in answer.aiter_raw():
                    yield reading.feed(read)
                yield reading.close()
            finally:
                await answer.aclose()

        return StreamingResponse(reframed(), status_code=answer.status_code, media_type="text/event-stream")

    return Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])


@contextmanager
def running_proxy(upstream: str, name: str) -> Iterator[str]:
    """The proxy `name` in front of `upstream`, on a free loopback port; yields its base URL."""
    with running_app(proxy_app(upstream, PROXIES[name]), name) as url:
        yield url


@contextmanager
def running_app(app: Starlette, name: str) -> Iterator[str]:
    """`app` served on a free loopback port until the block ends; yields its base URL."""
    with BackgroundServer(app, name=f"{name} proxy") as server:
        yield server.base_url


def routing_app(upstream: str, prefix: str) -> Starlette:
    """A proxy as a gate sees one: a model named `<prefix>+NAME` goes to the upstream's fault NAME, any other to the
    clean upstream. Its defect: it reads a stream whole, and one that ends without `data: [DONE]` (a stream cut
    short, to its reading) it answers with an error of its own, HTTP 502, turning the upstream's defect into
    another, as proxies do with a stream that broke under them."""
    client = httpx.AsyncClient(timeout=30)

    async def forward(request: Request) -> Response:
        body = await request.body()
        try:
            sent = json.loads(body) if body else {}
        except ValueError:
            sent = {}
        model = sent.get("model", "") if isinstance(sent, dict) else ""
        fault = model.removeprefix(f"{prefix}+") if isinstance(model, str) and model.startswith(f"{prefix}+") else ""
        base = f"{upstream}/faults/{fault}" if fault else upstream
        answer = await client.request(request.method, base + request.url.path, content=body,
                                      headers={"content-type": request.headers.get("content-type", "application/json")})
        kind = answer.headers.get("content-type", "")
        if kind.startswith("text/event-stream") and b"data: [DONE]" not in answer.content:
            return Response(json.dumps({"error": {"message": "upstream stream ended early", "type": "proxy_error"}}),
                            status_code=502, media_type="application/json")
        return Response(answer.content, status_code=answer.status_code, media_type=kind or None)

    return Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST", "DELETE"])])
