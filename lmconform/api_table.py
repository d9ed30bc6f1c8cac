"""The APIs lmconform speaks, in one table, on the ground floor so that every floor of lmconform can read it.

An API is one folder, `lmconform/apis/<name>/` (its layout: `lmconform/apis/__init__.py`). Every list of APIs in
lmconform reads this table: the rooms find an API's module with `Api.room`, the cases and schemas readers its
folders. Adding an API is a new folder and one line below; tests/test_apis.py fails when an entry lacks what every
API needs, and tests/test_architecture.py when any other module names an API.

The entries are loaded by name (`import_module`), not imported: the table stands below the folders whose rooms
stand on every floor, and names only the folders.
"""

from __future__ import annotations

from importlib import import_module

from lmconform.api_entry import HTTP, STDIO, Api


def _entry(name: str) -> Api:
    """The entry of the API whose folder is `name`."""
    entry = import_module(f"lmconform.apis.{name}").API
    if entry.name != name:
        raise ValueError(f"lmconform/apis/{name}/ holds the entry of {entry.name!r}: an API's name is its folder's")
    return entry


# The table, in the order reports and runs list the APIs: one line per API, its folder's name.
APIS: dict[str, Api] = {api.name: api for api in map(_entry, (
    "chat",
    "completions",
    "models",
    "responses",
    "messages",
    "native_chat",
    "vscodelm",
))}


def api_of(name: str) -> Api:
    """The table entry of an API by name; a name the table lacks is a programming error, said plainly."""
    if name not in APIS:
        raise KeyError(f"no API {name!r} in lmconform.api_table.APIS (known: {', '.join(APIS)})")
    return APIS[name]


__all__ = ["APIS", "HTTP", "STDIO", "Api", "api_of"]
