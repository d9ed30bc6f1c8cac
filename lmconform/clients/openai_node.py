"""The openai npm package (v4.96.0) between the socket and a JavaScript client such as Void: what
`for await (const chunk of stream)` yields for a captured exchange, and what it throws.

Sources: openai/openai-node at tag v4.96.0 (f99e7c3ca9348a8611665b54a68a9e377dc61ea9): src/streaming.ts
(`Stream.fromSSEResponse`, `_iterSSEMessages`, `SSEDecoder`), src/internal/decoders/line.ts (`LineDecoder`),
src/core.ts (`makeRequest`'s non-2xx path, `safeJSON`), src/error.ts (`APIError.makeMessage`, `APIError.generate`).

The SDK's SSE decoder is not the WHATWG algorithm that `lmconform.wire.sse` implements: it keeps a leading
byte-order mark in the first field name, tells an absent `event:` field (null) from `event: message`, and
dispatches a block that has an `event:` line but no data. Those differences decide what its callers see, so the
decoder is emulated here instead of borrowed from the wire parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lmconform.clients.js.json_parse import json_parse
from lmconform.clients.js.values import UNDEFINED, Thrown, get, stringify, to_string, truthy
from lmconform.wire.http import HttpExchange


def sdk_chunks(exchange: HttpExchange) -> Iterator[Any]:
    """What `for await (const chunk of stream)` yields, raising what the SDK throws (as `Thrown`)."""
    if exchange.status is None:
        # The SDK retries and then throws APIConnectionTimeoutError or APIConnectionError.
        timed_out = exchange.error_kind in ("timeout", "deadline")
        raise Thrown("Error: " + ("Request timed out." if timed_out else "Connection error."))
    if not 200 <= exchange.status <= 299:
        raise status_error(exchange.status, exchange.body)
    if exchange.status in (204, 205):
        # fetch gives these statuses a null body.
        raise Thrown("Error: Attempted to iterate over a response with no body")

    done = False
    for event, data in sse_messages(exchange.body):
        if done:
            continue
        if data.startswith("[DONE]"):
            done = True
            continue
        parsed = json_parse(data)
        if event is None or event.startswith("response.") or event.startswith("transcript."):
            if truthy(parsed) and truthy(get(parsed, "error")):
                raise Thrown("Error: " + api_error_message(None, get(parsed, "error"), UNDEFINED))
            yield parsed
        else:
            if event == "error":
                error, message = get(parsed, "error"), get(parsed, "message")
                raise Thrown("Error: " + api_error_message(None, error, message))
            yield {"event": event, "data": parsed}


def status_error(status: int, body: bytes) -> Thrown:
    """`makeRequest` on `!response.ok`: `APIError.generate(status, safeJSON(text), text-if-not-JSON)`."""
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")  # Response.text() drops a BOM
    try:
        parsed: Any = json_parse(text)
    except Thrown:
        parsed = UNDEFINED
    message = UNDEFINED if truthy(parsed) else text
    error = get(parsed, "error", optional=True)
    return Thrown("Error: " + api_error_message(status, error, message), status=status)


def api_error_message(status: int | None, error: Any, message: Any) -> str:
    """`APIError.makeMessage`, then the template literal that turns it into the Error's message."""
    inner = get(error, "message", optional=True)
    if truthy(inner):
        msg = inner if isinstance(inner, str) else stringify(inner)
    elif truthy(error):
        msg = stringify(error)
    else:
        msg = message
    if status and truthy(msg):
        return f"{status} {to_string(msg)}"
    if status:
        return f"{status} status code (no body)"
    if truthy(msg):
        return to_string(msg)
    return "(no status code or body)"


def sse_messages(body: bytes) -> Iterator[tuple[str | None, str]]:
    """`_iterSSEMessages`: LineDecoder lines fed to SSEDecoder, which dispatches on a blank line only.

    LineDecoder ends a line at CR, LF or CRLF however the reads fall, and at end of body flushes a last line
    that had no terminator, so splitting the whole body at once gives the same lines.
    """
    lines = re.split(rb"\r\n|\r|\n", body)
    if lines[-1] == b"":
        lines.pop()
    event: str | None = None
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", errors="replace")  # Buffer#toString: replacement, BOM kept
        if not line:
            if not event and not data:
                continue
            yield event, "\n".join(data)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)


