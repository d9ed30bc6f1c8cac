"""The sources a run knows, by the name a case gives in its `source` (lmconform.source says what a source is).
Adding a source is its module and a line here."""

from __future__ import annotations

from lmconform.fuzz import agents, chains, requests, streams
from lmconform.source import Source

SOURCES: dict[str, Source] = {
    chains.SOURCE: chains,
    requests.SOURCE: requests,
    streams.SOURCE: streams,
    agents.SOURCE: agents,
}
