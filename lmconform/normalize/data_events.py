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
