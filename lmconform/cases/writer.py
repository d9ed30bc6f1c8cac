"""Writing new case files beside the ones lmconform ships (or into any cases folder): numbered after the files
already there, with a description no other case has, whole or not at all, and never over a file that exists."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

from lmconform.cases.model import Case
from lmconform.cases.reader import cases_folder
from lmconform.files import write_json_atomically


def descriptions_in(folder: Path) -> set[str]:
    return {description for path in folder.glob("*.json") if (description := _description_of(path)) is not None}


def next_index(folder: Path, stem: str) -> int:
    numbered = (re.fullmatch(rf"{re.escape(stem)}-(\d+)\.json", path.name) for path in folder.glob(f"{stem}-*.json"))
    return max((int(found[1]) for found in numbered if found), default=0) + 1


def save_finding(case: Case, root: Path) -> str | None:
    """Write a generated case with a finding as `generated-<n>.json` in the folder of its API's cases under `root`
    (reader.cases_folder), so that the next run plays it as a regression case; its id, or None when it could not be
    written."""
    folder = cases_folder(root, case.api)
    generated = case.provenance.get("generated", {})
    what = generated.get("violation") or f"{generated.get('mode', 'generated')} {generated.get('source', '')}".strip()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        taken = descriptions_in(folder)
        for _ in range(100):
            index = next_index(folder, "generated")
            description = f"Generated request {index} with a finding: {what}"[:80]
            if description not in taken and create(folder / f"generated-{index}.json", case.document(description)):
                return f"{case.api}/generated-{index}"
    except OSError:
        return None
    return None


def create(path: Path, document: dict) -> bool:
    """Write `document` as `path` unless a file is already there: whole or not at all, and never over a file.
    A hard link is the atomic create-if-absent that a rename is not."""
    pending = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.pending")
    write_json_atomically(pending, document)
    try:
        path.hardlink_to(pending)
    except FileExistsError:
        return False
    finally:
        pending.unlink()
    return True


def _description_of(path: Path) -> str | None:
    try:
        document = json.loads(path.read_bytes())
    except ValueError:
        return None
    return document.get("description") if isinstance(document, dict) else None
