"""What reports call an API and a surface, for people: "Anthropic Messages", not `messages`.

An API's name is its title in the table of APIs, and the surface of an API's own checks is called by that name; the
surfaces that are no API (the wire, the clients, the schemas) by vocabulary.SURFACE_NAMES. Every report reads
names through these two functions."""

from __future__ import annotations

from lmconform.apis import APIS
from lmconform.vocabulary import SURFACE_NAMES


def api_title(api: str) -> str:
    return APIS[api].title if api in APIS else api


def surface_name(surface: str) -> str:
    return api_title(surface) if surface in APIS else SURFACE_NAMES.get(surface, surface)
