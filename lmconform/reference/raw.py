"""An answer's bytes on the wire otherwise than its door wrote them: dripped, gzip-encoded, or written on the socket
by hand, for what an HTTP library will not send: a connection reset in the middle of a stream, a body delimited by
closing the connection, a `Content-Length` that lies.

uvicorn lends each request's socket to the app (`lending_protocol`, the server's HTTP protocol); a `RawAnswer` takes
over the connection from there: it writes the status line, the headers and the body of the clean answer in its own
framing, then closes (or resets) the connection, which is never reused.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import zlib
from collections.abc import AsyncIterator
from enum import Enum
from functools import partial
from http import HTTPStatus
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

SOCKET = "lmconform.transport"  # the key of scope["extensions"] the lent transport is under
RESET_AFTER_EVENTS = 3
DRIP_BYTES = 8  # the first bytes of a dripping stream, sent one per write …
DRIP_PAUSE_S = 0.1  # … this far apart: far within any read timeout, far past a segment's usual gap
LENGTH_LIE = 32  # bytes a lying Content-Length is off by
_FRAMING_HEADERS = frozenset({b"content-length", b"transfer-encoding", b"connection"})


class Framing(Enum):
    RESET = "reset"  # chunked, reset (TCP RST) after RESET_AFTER_EVENTS events
    CLOSE_DELIMITED = "close-delimited"  # HTTP/1.0: no length, no chunks, the end is the connection's close
    LENGTH_SHORT = "length-short"  # Content-Length LENGTH_LIE bytes short of the body, which is sent whole
    LENGTH_LONG = "length-long"  # Content-Length LENGTH_LIE bytes past the body, then the connection closes


class RawAnswer(Response):
    """`answer` (any Starlette response) framed as `framing` says, on the lent socket."""

    def __init__(self, answer: Response, framing: Framing) -> None:
        super().__init__(status_code=answer.status_code)
        self.answer, self.framing = answer, framing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = (scope.get("extensions") or {}).get(SOCKET)
        if transport is None:  # another ASGI server, or the app driven in process: the framing is not ours to change
            await self.answer(scope, receive, send)
            return
        await self._write(transport)
        # The connection is gone: wait for uvicorn to notice, so that it does not answer the request a second time.
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _write(self, transport: asyncio.Transport) -> None:
        headers = [(name, value) for name, value in self.answer.raw_headers if name.lower() not in _FRAMING_HEADERS]
        version = b"HTTP/1.0" if self.framing is Framing.CLOSE_DELIMITED else b"HTTP/1.1"
        if self.framing is Framing.RESET:
            transport.write(_head(version, self.status_code, [*headers, (b"transfer-encoding", b"chunked")]))
            events = 0
            async for data in body_of(self.answer):
                transport.write(b"%x\r\n%s\r\n" % (len(data), data) if data else b"")
                events += data.count(b"\n\n")
                if events >= RESET_AFTER_EVENTS:
                    await _drained(transport)
                    _reset(transport)
                    return
            transport.write(b"0\r\n\r\n")
        elif self.framing is Framing.CLOSE_DELIMITED:
            transport.write(_head(version, self.status_code, [*headers, (b"connection", b"close")]))
            async for data in body_of(self.answer):
                transport.write(data)
        else:
            body = b"".join([data async for data in body_of(self.answer)])
            lie = -LENGTH_LIE if self.framing is Framing.LENGTH_SHORT else LENGTH_LIE
            length = str(max(0, len(body) + lie)).encode()
            transport.write(_head(version, self.status_code, [*headers, (b"content-length", length),
                                                              (b"connection", b"close")]))
            transport.write(body)
        transport.close()  # after what was written is sent


def _head(version: bytes, status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
    lines = [b"%s %d %s" % (version, status, HTTPStatus(status).phrase.encode()),
             *(name + b": " + value for name, value in headers)]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def body_of(answer: Response) -> AsyncIterator[bytes]:
    """The body of any answer, write by write."""
    if isinstance(answer, StreamingResponse):
        async for data in answer.body_iterator:
            yield data.encode() if isinstance(data, str) else bytes(data)
    else:
        yield bytes(answer.body)


async def dripped(body: AsyncIterator[bytes], count: int = DRIP_BYTES, pause: float = DRIP_PAUSE_S
                  ) -> AsyncIterator[bytes]:
    """The body with its first `count` bytes one per write, `pause` apart."""
    left = count
    async for data in body:
        while left and data:
            yield data[:1]
            data, left = data[1:], left - 1
            await asyncio.sleep(pause)
        if data:
            yield data


async def gzipped(body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The body gzip-encoded, each write flushed as it comes, so that a client can decode it without waiting for
    the next."""
    compressor = zlib.compressobj(wbits=31)  # the gzip container
    async for data in body:
        yield compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    yield compressor.flush()


def accepts_gzip(request: Request) -> bool:
    return "gzip" in request.headers.get("accept-encoding", "")


GZIP_HEADERS = {"content-encoding": "gzip", "vary": "accept-encoding"}


async def _drained(transport: asyncio.Transport) -> None:
    """Until the transport has handed every byte to the kernel: a reset discards what is still buffered."""
    while transport.get_write_buffer_size() and not transport.is_closing():
        await asyncio.sleep(0.001)


def _reset(transport: asyncio.Transport) -> None:
    """Close with a TCP RST instead of a FIN: linger on, with a timeout of zero."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def _lend(app: ASGIApp, protocol: H11Protocol, scope: Scope, receive: Receive, send: Send) -> None:
    scope["extensions"] = {**(scope.get("extensions") or {}), SOCKET: protocol.transport}
    await app(scope, receive, send)


class LendingProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, lending each request's transport to the app under `scope["extensions"]`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = partial(_lend, self.app, self)
