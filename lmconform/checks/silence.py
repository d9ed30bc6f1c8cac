"""The longest silence of a streamed answer: the longest time without an event, from the request to the first event,
between two events, or after the last one until the answer was cut, and what kept the connection alive in it.

An SSE comment line (`: keep-alive`) keeps bytes flowing, so an HTTP read timeout never fires, but it is no event:
Codex's stream idle timeout (its provider setting `stream_idle_timeout_ms`, 300 000 ms unless set) waits for an event,
and when it expires Codex drops the stream and sends the whole prompt again (openai/codex #31539). A server that
prefills a long prompt for longer than that must send events meanwhile, as llama.cpp's llama-server does since PR
#25241 (`response.in_progress` during the prefill), not comments."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from lmconform.wire.http import HttpExchange

COMMENT_LINE = re.compile(rb"(?:^|(?<=\n)|(?<=\r)):")


@dataclass(frozen=True)
class Silence:
    """The longest stretch of a stream without an event: its length, where it was, and the comment lines and the
    events that were no part of the answer (`response.in_progress`) sent over the whole stream."""

    seconds: float
    where: str
    comments_in_it: int  # SSE comment lines that arrived during it
    comments: int  # SSE comment lines of the whole stream
    progress_events: int  # events sent before the first output, beyond the first (`response.in_progress`)

    @property
    def kept_alive_by(self) -> str:
        """What kept the connection alive during the silence, in words."""
        if self.comments_in_it:
            return (f"kept alive by {self.comments_in_it} SSE comment line{'' if self.comments_in_it == 1 else 's'} "
                    "only, which Codex does not count as an event")
        return "nothing arrived during it"

    @property
    def keep_alive_kind(self) -> str:
        """The kind of keep-alive the stream sent, in words."""
        kinds = ([f"{self.comments} SSE comment line{'' if self.comments == 1 else 's'}"] if self.comments else []) + \
            ([f"{self.progress_events} progress event{'' if self.progress_events == 1 else 's'} before the output"]
             if self.progress_events else [])
        return "keep-alives sent: " + (", ".join(kinds) if kinds else "none")


def _name(data: str, event: str) -> str:
    """An event's name: its `event:` field, or the `type` its JSON says, or nothing."""
    if event != "message":
        return event
    try:
        payload = json.loads(data)
    except ValueError:
        return ""
    kind = payload.get("type") if isinstance(payload, dict) else None
    return kind if isinstance(kind, str) else ""


def longest_silence(exchange: HttpExchange) -> Silence:
    """The longest silence of an event stream (the exchange's reads carry their arrival times)."""
    ends = list(accumulate(len(chunk.data) for chunk in exchange.chunks))

    def arrival(offset: int) -> float:
        return exchange.chunks[min(bisect_right(ends, offset), len(ends) - 1)].at if ends else 0.0

    events = exchange.sse.events
    arrivals = [arrival(event.offset) for event in events]
    starts = [0.0, *arrivals]
    stops = [*arrivals, exchange.duration_s] if exchange.error else arrivals
    gaps = [(stop - start, index) for index, (start, stop) in enumerate(zip(starts, stops))]
    seconds, index = max(gaps, default=(0.0, 0))
    if index == 0:
        where = "before the first event"
    else:
        name = _name(events[index - 1].data, events[index - 1].event)
        named = f" ({name})" if name else ""
        where = (f"after the last event, #{index - 1}{named}, until the answer was cut" if index == len(events)
                 else f"between event #{index - 1}{named} and event #{index}")
    comment_times = [arrival(match.start()) for match in COMMENT_LINE.finditer(exchange.body)]
    start, stop = starts[index], starts[index] + seconds
    names = [_name(event.data, event.event) for event in events]
    first_output = next((position for position, name in enumerate(names) if name.startswith("response.output_item")
                         or name.startswith("response.output_text")), len(names))
    progress = sum(name == "response.in_progress" for name in names[:first_output])
    return Silence(round(seconds, 4), where, sum(start < at < stop for at in comment_times), len(comment_times),
                   progress)
