"""The data events of an event stream, whatever API it carries: each event with its JSON payload, or the `[DONE]`
sentinel that OpenAI's streams (and the streams of the APIs that copy them) end with. One reading per answer, which
the wire checks and an API's own reading of its chunks share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmconform.normalize.events import Source
from lmconform.wire.exchange import NOT_JSON
from lmconform.wire.http import HttpExchange
from lmconform.wire.sse import SSEEvent

DONE = "[DONE]"


@dataclass(frozen=True)
class DataEvent:
    """One event of a stream: its JSON payload (NOT_JSON when it is none), or the [DONE] sentinel."""

    event: SSEEvent
    payload: Any
    done: bool

    @property
    def source(self) -> Source:
        return Source(self.event.label(), self.event.excerpt())


def read_data_events(exchange: HttpExchange) -> list[DataEvent]:
    """Every event of the stream; read it through `exchange.view` to read it once."""
    return [DataEvent(event, None, True) if payload is NOT_JSON and event.data.strip() == DONE
            else DataEvent(event, payload, False) for event, payload in zip(exchange.sse.events, exchange.payloads)]


@dataclass(frozen=True)
class TypedEvent:
    """One event of a stream whose payloads name their kind in `type` (the Responses API, Anthropic's Messages, LM
    Studio's native chat): the event as it came, and its data as JSON (NOT_JSON when it is none)."""

    event: SSEEvent
    payload: Any

    @property
    def type(self) -> str | None:
        kind = self.payload.get("type") if isinstance(self.payload, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def source(self) -> Source:
        return Source(self.event.label(), self.event.excerpt())

    @property
    def has_event_field(self) -> bool:
        """Whether the event named itself with an `event:` line (clients that dispatch on it need one)."""
        return any(line.startswith(b"event:") for line in self.event.raw.splitlines())

    def get(self, key: str, default: Any = None) -> Any:
        return self.payload.get(key, default) if isinstance(self.payload, dict) else default

    def part(self, key: str) -> dict:
        """A field that is an object (`message`, `content_block`, `delta`, `usage`); `{}` when it is not one."""
        value = self.get(key)
        return value if isinstance(value, dict) else {}


def read_typed_events(exchange: HttpExchange) -> list[TypedEvent]:
    """Every event of the stream with its payload, in order."""
    return [TypedEvent(event, payload) for event, payload in zip(exchange.sse.events, exchange.payloads)]
