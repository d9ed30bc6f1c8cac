"""The schema documents as shipped beside this module, and a profile's overlay applied to copies of them.

An overlay (`overlays/<profile>.json`, its format `overlays/overlay.schema.json`) is a list of patches. Each names a
target subschema by URI — a document's `$id`, then an `#anchor` or a `#/json/pointer` — and holds RFC 6902
operations whose paths are relative to that target. The patched documents keep their `$id`s, so every `$ref` of the
base reaches the patched subschema. A `test` operation that fails means the base changed under the overlay: loading
stops with an OverlayError rather than patch the wrong place.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from lmconform.api_table import APIS

SCHEMAS_DIR = Path(__file__).resolve().parent
OVERLAYS_DIR = SCHEMAS_DIR / "overlays"
BASE_URI = "https://lmconform.dev/schemas/"
LEVEL_KEY = "x-lmconform-level"  # our annotation: how much a requirement matters (docs/schemas.md)


class OverlayError(ValueError):
    """An overlay that does not fit the base schemas it patches."""


@cache
def schema_files() -> dict[str, Path]:
    """Every schema document by its path (`chat/chunk.json`): an API's schemas are in its folder
    (`apis/chat/schemas/chunk.json`), those every API shares beside this module (`common/error.json`); overlays
    are not schemas."""
    shared = {path.relative_to(SCHEMAS_DIR).as_posix(): path for path in SCHEMAS_DIR.rglob("*.json")
              if path.parent.name != "overlays"}
    owned = {f"{api.name}/{path.relative_to(api.folder / 'schemas').as_posix()}": path
             for api in APIS.values() for path in (api.folder / "schemas").rglob("*.json")}
    return dict(sorted({**shared, **owned}.items()))


def schema_paths() -> list[str]:
    """Every schema document, as its path (`chat/chunk.json`)."""
    return list(schema_files())


@cache
def base_documents() -> dict[str, dict]:
    """Every schema document by `$id`; each `$id` is BASE_URI + its path, so a file is found from its id."""
    documents = {}
    for relative, path in schema_files().items():
        document = json.loads(path.read_text())
        if document.get("$id") != BASE_URI + relative:
            raise OverlayError(f"{relative}: $id is {document.get('$id')!r}, expected {BASE_URI + relative!r}")
        documents[BASE_URI + relative] = document
    return documents


def overlay_names() -> list[str]:
    return sorted(path.stem for path in OVERLAYS_DIR.glob("*.json") if path.name != "overlay.schema.json")


@cache
def overlay(name: str) -> dict:
    path = OVERLAYS_DIR / f"{name}.json"
    if not path.is_file():
        raise OverlayError(f"no overlay {name!r} (known: {', '.join(overlay_names())})")
    document = json.loads(path.read_text())
    format_ = json.loads((OVERLAYS_DIR / "overlay.schema.json").read_text())
    problems = sorted(Draft202012Validator(format_).iter_errors(document), key=lambda error: list(error.path))
    if problems:
        raise OverlayError(f"overlays/{name}.json: {problems[0].message} at /{'/'.join(map(str, problems[0].path))}")
    return document


def patched(documents: dict[str, dict], *names: str) -> dict[str, dict]:
    """Copies of `documents` with the overlays `names` applied in order."""
    result = copy.deepcopy(documents)
    for name in names:
        for number, patch in enumerate(overlay(name)["patches"]):
            where = f"overlays/{name}.json patch {number} ({patch['target']})"
            uri, _, fragment = patch["target"].partition("#")
            if uri not in result:
                raise OverlayError(f"{where}: no schema has the id {uri}")
            pointer = fragment if fragment.startswith("/") or not fragment else anchor_pointer(result[uri], fragment)
            if pointer is None:
                raise OverlayError(f"{where}: no subschema has the anchor {fragment!r}")
            for operation in patch["ops"]:
                # Paths (and `from`) are relative to the target.
                absolute = {**operation, "path": pointer + operation["path"],
                            **({"from": pointer + operation["from"]} if "from" in operation else {})}
                try:
                    result[uri] = _operate(result[uri], absolute["path"], absolute)
                except (KeyError, IndexError, ValueError, TypeError) as error:
                    raise OverlayError(f"{where}: {operation['op']} {operation['path']}: {error}") from None
    return result


def anchor_pointer(node: Any, anchor: str, pointer: str = "") -> str | None:
    """The JSON pointer of the subschema of `node` that declares `$anchor: anchor`."""
    if isinstance(node, dict):
        if node.get("$anchor") == anchor:
            return pointer
        children: Iterator[tuple[Any, Any]] = iter(node.items())
    elif isinstance(node, list):
        children = iter(enumerate(node))
    else:
        return None
    for key, child in children:
        found = anchor_pointer(child, anchor, f"{pointer}/{escape(str(key))}")
        if found is not None:
            return found
    return None


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _tokens(pointer: str) -> list[str]:
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]] if pointer else []


def _resolve(document: Any, tokens: list[str]) -> Any:
    node = document
    for token in tokens:
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _operate(document: Any, pointer: str, operation: dict) -> Any:
    """One RFC 6902 operation at `pointer` of `document` (changed in place); the document, or its replacement when
    the pointer is the whole document."""
    kind, tokens = operation["op"], _tokens(pointer)
    if kind in ("copy", "move"):
        value = copy.deepcopy(_resolve(document, _tokens(operation["from"])))
        if kind == "move":
            document = _operate(document, operation["from"], {"op": "remove"})
        return _operate(document, pointer, {"op": "add", "value": value})
    if not tokens:
        if kind == "test":
            if document != operation["value"]:
                raise ValueError(f"the target is {document!r}, not {operation['value']!r}")
            return document
        if kind in ("add", "replace"):
            return copy.deepcopy(operation["value"])
        raise ValueError("cannot remove a whole document")
    parent, last = _resolve(document, tokens[:-1]), tokens[-1]
    if kind == "test":
        actual = parent[int(last)] if isinstance(parent, list) else parent[last]
        if actual != operation["value"]:
            raise ValueError(f"found {actual!r}, not {operation['value']!r}")
    elif kind == "add":
        value = copy.deepcopy(operation["value"])
        if isinstance(parent, list):
            parent.insert(len(parent) if last == "-" else int(last), value)
        else:
            parent[last] = value
    elif kind == "replace":
        if isinstance(parent, list):
            parent[int(last)] = copy.deepcopy(operation["value"])
        elif last not in parent:
            raise KeyError(last)
        else:
            parent[last] = copy.deepcopy(operation["value"])
    elif kind == "remove":
        del parent[int(last) if isinstance(parent, list) else last]
    else:
        raise ValueError(f"unknown operation {kind!r}")
    return document
