"""The headline of a run: one line per client lmconform replays answers through, per coding agent (run live, or
predicted from its profile) and per surface of the API, each graded (lmconform.verdicts.grades) with its reason, its
known cause and the way round.

It is built from results-record rows alone, so the run report, the pytest terminal, a CI step summary and the matrix
say the same thing, and a client or surface added to the registry appears here without an edit: clients are the
`client` checks' surfaces, each per API it replays; surfaces are the other checks' surfaces, with two areas that cut
across them (tool calls, chaining) gathered under one name each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lmconform.api_table import APIS
from lmconform.surfaces import client_line, surface_name, surface_rank
from lmconform.verdicts.agents import agent_lines
from lmconform.verdicts.grades import Line, fragment, line_of
from lmconform.verdicts.records import CaseResult

# Areas a reader asks about across surfaces: the checks every API shares that belong to one (each API's own, its
# entry's `topics`). A check whose id starts with a topic's prefix is counted under the topic; every other check under
# its surface.
SHARED_TOPICS = {"Tool calls": ("generation.tool_call.",)}
TOPIC_ORDER = ("Tool calls", "Chaining")


def _topics() -> tuple[tuple[str, tuple[str, ...]], ...]:
    prefixes: dict[str, list[str]] = {topic: list(SHARED_TOPICS.get(topic, ())) for topic in TOPIC_ORDER}
    for api in APIS.values():
        for topic, owned in api.topics.items():
            prefixes.setdefault(topic, []).extend(owned)
    return tuple((topic, tuple(found)) for topic, found in prefixes.items())


TOPICS = _topics()


@dataclass(frozen=True)
class Headline:
    clients: tuple[Line, ...]
    surfaces: tuple[Line, ...]

    @property
    def lines(self) -> tuple[Line, ...]:
        return self.clients + self.surfaces


def topic_of(check: str, surface: str) -> str:
    for name, prefixes in TOPICS:
        if check.startswith(prefixes):
            return name
    return surface_name(surface)


def build_headline(rows: Iterable[CaseResult], stable: bool = False) -> Headline:
    """The headline of one run. `stable`: leave out verdicts a known-verdicts file marks model-dependent and the
    counts, for a page that must come out the same on every machine."""
    rows = list(rows)
    clients: dict[tuple[str, str], list[CaseResult]] = {}
    surfaces: dict[str, list[CaseResult]] = {}
    surface_order: dict[str, tuple] = {}
    for row in rows:
        if row.kind == "client":
            clients.setdefault((row.surface, row.api), []).append(row)
        elif row.kind != "agent":  # a coding agent's own checks grade its line (lmconform.verdicts.agents)
            topic = topic_of(row.check, row.surface)
            surfaces.setdefault(topic, []).append(row)
            rank = (surface_rank(row.surface), topic != surface_name(row.surface))
            surface_order[topic] = min(surface_order.get(topic, rank), rank)
    api_order = list(APIS)
    client_keys = sorted(clients, key=lambda key: (surface_rank(key[0]), api_order.index(key[1])
                                                   if key[1] in api_order else len(api_order), key[1]))
    return Headline(
        clients=tuple(line_of(f"client-{fragment(surface.removeprefix('client.'))}-{fragment(api)}",
                              client_line(surface, api), clients[surface, api], stable, surface)
                      for surface, api in client_keys) + agent_lines(rows, stable),
        surfaces=tuple(line_of(f"surface-{fragment(topic)}", topic, surfaces[topic], stable)
                       for topic in sorted(surfaces, key=lambda topic: (surface_order[topic], topic))),
    )


