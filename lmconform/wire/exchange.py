"""One request and everything the target did in answer, kept exactly as it arrived, whatever the transport.

What every transport has lives here: what was sent (with a command line that sends it again), what came back read
by read with its arrival time, and why no complete answer could be had. What only HTTP has (a status, headers,
an event stream) lives with the HTTP transport (lmconform.wire.http).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Self, TypeVar

from lmconform.target import DEFAULT_MAX_BODY_BYTES
from lmconform.wire.collector import collector_paused

T = TypeVar("T")
BROKEN = "broken"  # the error kind of an answer whose connection the server ended before the end of its body


class Request(ABC):
    """A request as sent, credentials already redacted, so it may be printed anywhere. `body` is the JSON it
    carried (or the raw text of a body that was not JSON)."""

    body: Any

    @abstractmethod
    def reproduction(self) -> str:
        """A shell command that sends the same request again (a curl, for HTTP)."""


@dataclass(frozen=True)
class BodyChunk:
    """One read: `at` is seconds since the request was sent."""

    at: float
    data: bytes


@dataclass
class Exchange:
    """What happened for one request. `error` is set when no complete answer could be had."""

    request: Request
    chunks: list[BodyChunk] = field(default_factory=list)
    error: str | None = None
    # "unreachable" | "timeout" | "deadline" | "broken" (the connection ended before the body) | "protocol"; over
    # stdio also "exited" and "flood"
    error_kind: str | None = None
    truncated: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    duration_s: float = 0.0
    _views: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def body(self) -> bytes:
        return b"".join(chunk.data for chunk in self.chunks)

    def view(self, reading: Callable[[Self], T]) -> T:
        """`reading(self)`, computed once per exchange: every check that reads the stream as chat chunks (say)
        shares one reading of it. A reading takes the exchange of its own transport (an HttpExchange's)."""
        if reading not in self._views:
            with collector_paused():  # a reading of a long answer keeps an object or more per event
                self._views[reading] = reading(self)
        return self._views[reading]

    # Whether the exchanges of one case share a conversation (a process): an error in any of them then leaves the
    # whole case without a verdict.
    holds_conversation = False

    @property
    def succeeded(self) -> bool:
        """Whether the target answered as to a request it accepted (a 2xx status; a JSON-RPC result)."""
        return False

    @property
    def status_text(self) -> str:
        """How the target answered, in a few words: `HTTP 400`, `error -32602: Invalid params`."""
        return "no answer"

    def body_excerpt(self, limit: int = 600) -> str:
        text = self.body[:limit].decode("utf-8", errors="replace")
        return text + ("…" if len(self.body) > limit else "")


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"

    def __bool__(self) -> bool:
        return False


NOT_JSON: Any = _NotJson()
