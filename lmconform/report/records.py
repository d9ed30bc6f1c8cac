"""Results records (INTERFACES.md) read back from files: what the matrix and other reports are built from.

Only the record is read, never the check registry, so records written by other versions of the suite are read too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lmconform.vocabulary import Outcome


class MatrixError(Exception):
    """A results file that cannot be read as a results record, or an output that cannot be written."""


@dataclass(frozen=True)
class CaseResult:
    """One row of a results record: the verdict of one check on one case."""

    case: str
    check: str
    level: str
    outcome: str
    title: str = ""
    message: str = ""
    curl: str = ""


@dataclass(frozen=True)
class RunTarget:
    url: str
    label: str
    model: str = ""
    server_version: str = ""
    started: str = ""


@dataclass(frozen=True)
class RunResults:
    source: Path
    target: RunTarget
    results: tuple[CaseResult, ...]


def load_results(paths: list[Path | str]) -> list[RunResults]:
    """Each file read and checked as a results record; the first bad one raises a MatrixError naming it."""
    return [load_run(Path(path)) for path in paths]


def load_run(path: Path) -> RunResults:
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise MatrixError(f"{path}: no such file") from None
    except OSError as error:
        raise MatrixError(f"{path}: cannot read: {error.strerror or error}") from None
    except ValueError as error:
        raise MatrixError(f"{path}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise MatrixError(f"{path}: not a results record: the top level is not an object")
    target = field_of(document, "target", dict, path, "the record")
    rows = field_of(document, "results", list, path, "the record")
    return RunResults(
        source=path,
        target=RunTarget(
            url=text_field(target, "url", path, "target"),
            label=text_field(target, "label", path, "target"),
            model=text_field(target, "model", path, "target", required=False),
            server_version=text_field(target, "server_version", path, "target", required=False),
            started=text_field(document, "started", path, "the record", required=False),
        ),
        results=tuple(case_result(row, path, f"results[{index}]") for index, row in enumerate(rows)),
    )


def case_result(row: object, path: Path, where: str) -> CaseResult:
    if not isinstance(row, dict):
        raise MatrixError(f"{path}: {where} is not an object")
    outcome = text_field(row, "outcome", path, where)
    if outcome not in set(Outcome):
        raise MatrixError(f"{path}: {where}.outcome {outcome!r:.60} is not one of {', '.join(Outcome)}")
    return CaseResult(
        case=text_field(row, "case", path, where),
        check=text_field(row, "check", path, where),
        level=text_field(row, "level", path, where),
        outcome=outcome,
        title=text_field(row, "title", path, where, required=False),
        message=text_field(row, "message", path, where, required=False),
        curl=text_field(row, "curl", path, where, required=False),
    )


def field_of(record: dict, key: str, kind: type, path: Path, where: str):
    if key not in record:
        raise MatrixError(f"{path}: {where} has no {key!r}")
    if not isinstance(record[key], kind):
        raise MatrixError(f"{path}: {where}: {key!r} is not {'an object' if kind is dict else 'a list'}")
    return record[key]


def text_field(record: dict, key: str, path: Path, where: str, required: bool = True) -> str:
    """A string field; an optional one may be absent or null (a run that never learnt the server version)."""
    value = record.get(key)
    if value is None and not required:
        return ""
    if key not in record:
        raise MatrixError(f"{path}: {where} has no {key!r}")
    if not isinstance(value, str):
        raise MatrixError(f"{path}: {where}: {key!r} is not a string")
    return value
