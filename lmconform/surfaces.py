"""The surfaces checks judge (a check's surface is the head of its id, lmconform.vocabulary.surface_of), in the order
reports list them and under the names people read: the HTTP and SSE framing, each API of the table by its entry's
title, what every API shares, then the clients lmconform replays answers through, each named by the entries of the
APIs whose answers it reads. A surface none of these names is shown by its id, after them all."""

from __future__ import annotations

from lmconform.api_table import APIS

FRAMING = {"http": "HTTP", "sse": "Event streams"}
SHARED = {"errors": "Errors", "generation": "Answers", "schema": "Schemas", "proxy": "What the proxy changes"}
SURFACE_NAMES: dict[str, str] = {
    **FRAMING,
    **{api.name: api.title for api in APIS.values()},
    **SHARED,
    **{surface: name for api in APIS.values() for surface, name in api.clients.items()},
    "agent": "Coding agents",  # the real agents lmconform runs against a target (lmconform.agents)
}
SURFACE_ORDER = tuple(SURFACE_NAMES)


def surface_name(surface: str) -> str:
    return SURFACE_NAMES.get(surface, surface)


def client_line(surface: str, api: str) -> str:
    """What reports call a client reading one API's answers: "anthropic SDK for Python · Anthropic Messages"."""
    return f"{surface_name(surface)} · {APIS[api].title if api in APIS else api}"


def surface_rank(surface: str) -> tuple[int, str]:
    known = surface in SURFACE_ORDER
    return (SURFACE_ORDER.index(surface) if known else len(SURFACE_ORDER), "" if known else surface)
