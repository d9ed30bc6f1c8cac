"""The faults of the transport under every door's answers: what a broken network, a reverse proxy in front of the model
server or a hand-written HTTP server does to the bytes of a valid answer. Each is applied to the finished answer
(`ANSWER`), whatever API it carries; those that no HTTP library sends are written on the socket by hand
(lmconform.reference.raw).

Three are variants, forms a client must read: a stream that drips one byte per write, a gzip-encoded stream, and a
body whose end is the connection's close (HTTP/1.0).
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import TypeGuard

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse

from lmconform.reference.faults.registry import HTTP, Stage, fault, variant
from lmconform.reference.raw import (
    DRIP_BYTES,
    DRIP_PAUSE_S,
    GZIP_HEADERS,
    RESET_AFTER_EVENTS,
    Framing,
    RawAnswer,
    accepts_gzip,
    body_of,
    dripped,
    gzipped,
)

ANSWER = Stage("any door's finished answer (status, headers, body) as it is about to be sent; also given the request",
               in_answer=False)
ARRIVAL = Stage("a request as it arrives, before any door reads it (None), with the request and its body: a fault may "
                "answer it instead", in_answer=False)
# How many requests the server remembers having answered once (model-loading-once): more than any run sends.
REMEMBERED_REQUESTS = 4096
# nginx's own page for a dead upstream, byte for byte: what a client reads when the model server behind it is down.
BAD_GATEWAY_PAGE = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
                    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")


def _event_stream(answer: Response) -> TypeGuard[StreamingResponse]:
    return isinstance(answer, StreamingResponse) and \
        answer.headers.get("content-type", "").startswith("text/event-stream")


def _restreamed(answer: StreamingResponse, body: AsyncIterator[bytes], **headers: str) -> StreamingResponse:
    kept = {name: value for name, value in answer.headers.items() if name != "content-length"}
    return StreamingResponse(body, status_code=answer.status_code, headers={**kept, **headers})


@fault("connection-reset", ANSWER, api=HTTP,
       summary=f"after {RESET_AFTER_EVENTS} events of a stream the server resets the connection (TCP RST) "
               "(stream only)",
       seen_in="model servers that crash in the middle of a generation; proxies that kill a slow upstream")
def connection_reset(answer: Response, request: Request) -> Response:
    return RawAnswer(answer, Framing.RESET) if _event_stream(answer) else answer


@fault("bad-gateway-html", ANSWER, api=HTTP,
       summary="a streamed request is answered HTTP 502 with nginx's HTML error page (text/html) (stream only)",
       seen_in="reverse proxies (nginx, Caddy, a cloud load balancer) in front of a model server that is down")
def bad_gateway_html(answer: Response, request: Request) -> Response:
    return HTMLResponse(BAD_GATEWAY_PAGE, status_code=502) if _event_stream(answer) else answer


@fault("content-length-short", ANSWER, api=HTTP,
       summary="`Content-Length` says 32 bytes fewer than the body the server sends (stream and non-stream)",
       seen_in="hand-written HTTP servers that count characters instead of UTF-8 bytes, or count before an edit")
def content_length_short(answer: Response, request: Request) -> Response:
    return RawAnswer(answer, Framing.LENGTH_SHORT)


@fault("content-length-long", ANSWER, api=HTTP,
       summary="`Content-Length` says 32 bytes more than the body; the server closes the connection after the body "
               "(stream and non-stream)",
       seen_in="proxies that pass the upstream's length on after changing the body; servers that die mid-body")
def content_length_long(answer: Response, request: Request) -> Response:
    return RawAnswer(answer, Framing.LENGTH_LONG)


@variant("drip", ANSWER, api=HTTP,
         summary=f"the first {DRIP_BYTES} bytes of a stream arrive one byte per write, {DRIP_PAUSE_S * 1000:g} ms "
                 "apart (stream only)",
         seen_in="slow links, mobile networks and proxies that forward byte by byte")
def drip(answer: Response, request: Request) -> Response:
    return _restreamed(answer, dripped(body_of(answer))) if _event_stream(answer) else answer


@variant("gzip-stream", ANSWER, api=HTTP,
         summary="a stream is sent gzip-encoded (`Content-Encoding: gzip`), each event flushed, to a client that "
                 "accepts gzip (stream only)",
         seen_in="reverse proxies with compression on for every type (nginx `gzip_types *`, Cloudflare, Traefik)")
def gzip_stream(answer: Response, request: Request) -> Response:
    if not _event_stream(answer) or not accepts_gzip(request):
        return answer
    return _restreamed(answer, gzipped(body_of(answer)), **GZIP_HEADERS)


@variant("close-delimited", ANSWER, api=HTTP,
         summary="an HTTP/1.0 answer without `Content-Length` or chunks: the body ends when the server closes the "
                 "connection (stream and non-stream)",
         seen_in="HTTP/1.0 proxies and small embedded servers; RFC 9112 section 6.3, rule 8")
def close_delimited(answer: Response, request: Request) -> Response:
    return RawAnswer(answer, Framing.CLOSE_DELIMITED)


@fault("model-loading-once", ARRIVAL, api=HTTP,
       summary="a request the server has not seen before is answered HTTP 503 `Loading model`, and the same request "
               "sent again is answered (stream and non-stream)",
       seen_in="llama-server while it loads a model (503 `unavailable_error`); servers that load a model on the first "
               "request for it (LM Studio's just-in-time loading) and time out: a client that retries gets its answer",
       stateful=True)
def model_loading_once(answer: Response | None, request: Request, body: bytes) -> Response | None:
    seen = request.app.state.seen_requests
    key = hashlib.sha256(f"{request.method} {request.url.path}\n".encode() + body).digest()
    if answer is not None or key in seen:
        return answer
    if len(seen) >= REMEMBERED_REQUESTS:
        seen.clear()
    seen.add(key)
    return JSONResponse({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
                        status_code=503)
