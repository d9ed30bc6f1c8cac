"""Server-sent events, parsed to the WHATWG event-stream algorithm.

Written by hand on purpose: general-purpose SSE clients forgive framing errors (they replace invalid UTF-8,
drop an unterminated last event, skip junk) and say nothing. A conformance suite must accept exactly what the
standard accepts and *report* every deviation with its byte offset, so checks can cite it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event. `raw` is the exact bytes of the lines that made it, line ends included."""

    index: int
    event: str  # "message" when no event field was given
    data: str
    id: str | None
    retry: int | None
    raw: bytes
    offset: int  # byte offset of the event's first line in the body

    def excerpt(self, limit: int = 500) -> str:
        text = self.raw.decode("utf-8", errors="replace").rstrip("\r\n")
        return text if len(text) <= limit else text[:limit] + "…"

    def label(self) -> str:
        return f"SSE event #{self.index} (byte {self.offset})"


@dataclass(frozen=True)
class FramingIssue:
    """A deviation from the event-stream format. `kind` is one of FRAMING_KINDS."""

    kind: str
    offset: int
    detail: str
    excerpt: bytes = b""


FRAMING_KINDS = (
    "invalid_utf8",  # a line is not valid UTF-8 (decoded with U+FFFD, as the standard says)
    "unterminated_event",  # the body ended inside an event: no blank line, so the standard discards it
)


@dataclass
class SSEStream:
    events: list[SSEEvent] = field(default_factory=list)
    issues: list[FramingIssue] = field(default_factory=list)
    comments: int = 0  # comment lines (": keep-alive"); allowed, counted


def parse_sse(reads: Iterable[bytes]) -> SSEStream:
    raise NotImplementedError  # replaced by the incremental parser
