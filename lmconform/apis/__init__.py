"""The APIs' folders: one an API, `lmconform/apis/<name>/`, named by a line of the table (lmconform.api_table).

A folder holds its entry (its `__init__.py`, an `Api` of lmconform.api_entry: where the API is reached and what its
requests and answers hold), its data (`cases/`, `schemas/`; `refs.toml`, the public sources its checks cite, read
through the entry; `mutations.json`, the changes of its payloads its schemas must reject, read by
tests/test_schemas.py) and the rooms it brings, each a module or package named after the room of lmconform whose
floor it stands on (docs/architecture.md):

    normalize.py   its answers read into the generation vocabulary: `READING`, a lmconform.normalize.reading.Reading
    checks/        its checks, registered on import, with the scope rules that say which of its cases each judges
    reference/     the reference server's door for it (`door.py`: `ROUTES`) and the faults it serves (`faults*.py`)
    fuzz.py        the requests of its generated cases (`BODIES`, `VIOLATIONS`, `representatives`, `stream_request`)
    run.py         how its cases are played, when not over HTTP (`play`, `discover`)
"""
