"""When each part of an answer arrived: the time to the first byte and to the first token, tokens per second where
the answer's usage says how many it generated, and for an event stream the events over time (a stall is a flat
stretch, a burst a cliff), kept small enough for the results record: at most POINTS points, the longest gap's two
ends always among them."""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from statistics import median

from lmconform.checks.observed import AnyObserved
from lmconform.normalize.events import End, Text, ToolCallStarted
from lmconform.vocabulary import RATE_MEASURABLE_S, NotApplicable
from lmconform.wire.http import HttpExchange

POINTS = 60
EVENT_BYTE = re.compile(r"\(byte (\d+)\)")  # where a generation event's SSE event starts in the body
USAGE_OUTPUT = ("completion_tokens", "output_tokens")  # OpenAI's chat and text completions; Responses and Messages


def case_timing(observed: AnyObserved) -> dict | None:
    """The timing of an observed answer over HTTP (None for none, or for a bridge's transcript)."""
    exchange = observed.exchange
    if not isinstance(exchange, HttpExchange) or not exchange.chunks:
        return None
    timing: dict = {"first_byte_s": _s(exchange.chunks[0].at), "total_s": _s(exchange.duration_s)}
    if not exchange.is_event_stream or not exchange.sse.events:
        return timing
    ends = list(accumulate(len(chunk.data) for chunk in exchange.chunks))

    def arrival(offset: int) -> float:
        return exchange.chunks[min(bisect_right(ends, offset), len(ends) - 1)].at

    arrivals = [arrival(event.offset) for event in exchange.sse.events]
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:])]
    timing["events"] = len(arrivals)
    timing["longest_gap_s"] = _s(max(gaps, default=0.0))
    timing["median_gap_s"] = _s(median(gaps)) if gaps else 0.0
    timing["curve"] = curve(arrivals, gaps)
    first_token, tokens = _first_token_and_tokens(observed, arrival)
    if first_token is not None:
        timing["first_token_s"] = _s(first_token)
        streaming = arrivals[-1] - first_token
        if tokens and streaming >= RATE_MEASURABLE_S:
            timing["tokens_per_s"] = round(tokens / streaming, 1)
    return timing


def curve(arrivals: list[float], gaps: list[float]) -> list[list[float]]:
    """[seconds, events so far] at evenly spaced events, with the first, the last and the longest gap's ends."""
    count = len(arrivals)
    keep = {0, count - 1, *(round(i * (count - 1) / (POINTS - 3)) for i in range(POINTS - 2))}
    if gaps:
        widest = max(range(len(gaps)), key=gaps.__getitem__)
        keep |= {widest, widest + 1}
    return [[_s(arrivals[index]), index + 1] for index in sorted(keep)]


def _first_token_and_tokens(observed: AnyObserved, arrival) -> tuple[float | None, int | None]:
    """When the first text or tool call arrived, and how many tokens the usage says were generated."""
    try:
        events = observed.generation.events
    except NotApplicable:  # an API whose answers carry no generation (the model list)
        return None, None
    first = next((event for event in events if isinstance(event, ToolCallStarted)
                  or isinstance(event, Text) and event.text), None)
    where = EVENT_BYTE.search(first.source.label) if first is not None else None
    end = next((event for event in reversed(events) if isinstance(event, End)), None)
    usage = end.usage if end is not None and isinstance(end.usage, dict) else {}
    tokens = next((usage[name] for name in USAGE_OUTPUT if isinstance(usage.get(name), int)), None)
    return (arrival(int(where[1])) if where else None), tokens


def _s(seconds: float) -> float:
    return round(seconds, 4)
