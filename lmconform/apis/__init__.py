"""The APIs lmconform speaks, in one table.

An API is one folder, `lmconform/apis/<name>/`: its entry (the folder's `__init__.py`, an `Api`: where the API is
reached and what its requests and answers hold), its data (`cases/`, `schemas/`) and the rooms it brings, each a
module or package named after the room of lmconform whose floor it stands on (docs/architecture.md):

    normalize.py   its answers read into the generation vocabulary: `READING`, a lmconform.normalize.reading.Reading
    checks/        its checks, registered on import, with the scope rules that say which of its cases each judges
    reference/     the reference server's door for it (`door.py`: `ROUTES`) and the faults it serves (`faults*.py`)
    fuzz.py        the requests of its generated cases (`BODIES`, `VIOLATIONS`, `representatives`, `stream_request`)
    run.py         how its cases are played, when not over HTTP (`play`, `discover`)

Every list of APIs in lmconform reads this table: the rooms find an API's module with `Api.room`, the cases and
schemas readers its folders. Adding an API is a new folder and one line below; tests/test_apis.py fails when an
entry lacks what every API needs, and tests/test_architecture.py when any other folder names an API.
"""

from __future__ import annotations

from importlib import import_module

from lmconform.apis.entry import HTTP, STDIO, Api


def _entry(name: str) -> Api:
    """The entry of the API whose folder is `name`."""
    entry = import_module(f"{__name__}.{name}").API
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
        raise KeyError(f"no API {name!r} in lmconform.apis.APIS (known: {', '.join(APIS)})")
    return APIS[name]


__all__ = ["APIS", "HTTP", "STDIO", "Api", "api_of"]
