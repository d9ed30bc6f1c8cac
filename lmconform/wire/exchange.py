"""One request and everything the target did in answer, kept exactly as it arrived."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from collections.abc import Callable
from typing import Any, TypeVar

from lmconform.target import DEFAULT_MAX_BODY_BYTES
from lmconform.wire.redact import curl_command
from lmconform.wire.sse import SSEStream, parse_sse

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """A request as sent; `headers` are already redacted, so this object may be printed anywhere."""

    method: str
    url: str
    headers: dict[str, str]
    body: Any | None = None

    def curl(self) -> str:
        return curl_command(self.method, self.url, self.headers, self.body)


@dataclass(frozen=True)
class BodyChunk:
    """One network read: `at` is seconds since the request was sent."""

    at: float
    data: bytes


@dataclass
class Exchange:
    """What happened for one request. `error` is set when no complete answer could be had."""

    request: Request
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    chunks: list[BodyChunk] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None  # "unreachable" | "timeout" | "deadline" | "protocol"
    truncated: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    duration_s: float = 0.0
    _views: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def body(self) -> bytes:
        return b"".join(chunk.data for chunk in self.chunks)

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
    def json(self) -> Any:
        """The body parsed as JSON, or `NOT_JSON` when it is not a JSON document."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return NOT_JSON

    def view(self, reading: Callable[[Exchange], T]) -> T:
        """`reading(self)`, computed once per exchange: every check that reads the stream as chat chunks (say)
        shares one reading of it."""
        if reading not in self._views:
            self._views[reading] = reading(self)
        return self._views[reading]

    def body_excerpt(self, limit: int = 600) -> str:
        text = self.body[:limit].decode("utf-8", errors="replace")
        return text + ("…" if len(self.body) > limit else "")


# Answers that mean "this route does not exist". LM Studio says so with HTTP 200 and an error string.
MISSING_ROUTE_STATUSES = frozenset({404, 405, 501})
LMSTUDIO_UNKNOWN_ROUTE = "Unexpected endpoint or method"


def route_missing(exchange: Exchange) -> bool:
    if exchange.status in MISSING_ROUTE_STATUSES:
        return True
    error = exchange.json.get("error") if isinstance(exchange.json, dict) else None
    return isinstance(error, str) and error.startswith(LMSTUDIO_UNKNOWN_ROUTE)


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"

    def __bool__(self) -> bool:
        return False


NOT_JSON: Any = _NotJson()
