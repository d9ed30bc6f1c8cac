"""Writing what lmconform leaves behind (results records, case files): atomically, so a crash never leaves half a
file."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path


def write_json_atomically(path: Path, document: dict) -> None:
    """Write beside the destination and rename, so a crash never leaves a half-written results file."""
    write_bytes_atomically(path, json_file_bytes(path, document))


def json_text(document: dict) -> str:
    """A JSON file's text as lmconform writes them: indented, UTF-8 as it is, ending with a newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def json_file_bytes(path: Path, document: dict) -> bytes:
    """The bytes of a JSON file named `path`: its text in UTF-8, gzip-compressed when the name ends in `.gz` (a results
    record, `--results-json results.json.gz`, shrinks to a tenth). No time is written into the gzip header, so the
    same record is the same bytes."""
    data = json_text(document).encode("utf-8")
    return gzip.compress(data, mtime=0) if path.suffix == ".gz" else data


def write_text_atomically(path: Path, text: str) -> None:
    """`text` as UTF-8, written beside the destination and renamed into place."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """`data` written beside the destination and renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)  # mkstemp's private 0600 is for the temporary name, not the result
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
