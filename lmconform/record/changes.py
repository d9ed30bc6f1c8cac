"""What one version of an agent sends that another did not, from their recorded cases (lmconform.record.agents): each
request read as the parts a server may take or refuse — the endpoint, the query string, the headers and beta flags,
every field of the body (arrays as `[]`: `messages[].content[].cache_control`), the roles and the item, block and tool
types it names, the tools it offers and the JSON Schema keywords of their schemas — and the two sets compared part by
part. The texts themselves (prompts, descriptions) and the names of a schema's properties are not parts: they change
with every release and no server reads them as protocol.

Which of lmconform's checks judge something new follows from the recorded cases too: the checks whose scope takes a
request of one version and no request of the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmconform.cases import Case
from lmconform.checks.registry import REGISTRY

# The kinds of part, in the order a comparison lists them, with what a reader calls them.
KINDS = {
    "endpoints": "requests to",
    "query": "query strings",
    "headers": "headers",
    "betas": "beta flags",
    "fields": "fields",
    "roles": "roles",
    "types": "item, block and tool types",
    "tools": "tools offered",
    "schema": "JSON Schema keywords in tool and output schemas",
}
BETA_HEADERS = ("anthropic-beta", "openai-beta", "x-codex-beta-features")
SCHEMA_FIELDS = ("input_schema", "parameters", "schema")
TOOL_NAMES = ("tools[].name", "tools[].function.name")
# Keywords whose value names subschemas by a name of the schema's own (property names, definitions).
NAMED_SUBSCHEMAS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
# Keywords whose value is data, not a schema.
DATA_KEYWORDS = ("enum", "const", "required", "examples", "default", "description", "title", "$schema", "$id",
                 "$ref", "pattern", "format")

Parts = dict[str, set[str]]


def parts(document: dict) -> Parts:
    """The parts of one recorded case's request (its file's JSON)."""
    found: Parts = {kind: set() for kind in KINDS}
    request = document.get("request", {})
    route, _, query = str(request.get("path", "")).partition("?")
    found["endpoints"].add(f"{request.get('method', '')} {route}")
    found["query"] |= {f"{route}?{pair}" for pair in query.split("&") if pair}
    headers = document.get("provenance", {}).get("headers", {})
    found["headers"] |= set(headers)
    for name in BETA_HEADERS:
        found["betas"] |= {f"{name}: {flag.strip()}" for flag in headers.get(name, "").split(",") if flag.strip()}
    _walk(request.get("body"), "", found)
    return found


def _walk(value: Any, path: str, found: Parts) -> None:
    if isinstance(value, list):
        for item in value:
            _walk(item, f"{path}[]", found)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        here = f"{path}.{key}" if path else key
        found["fields"].add(here)
        if key in SCHEMA_FIELDS and isinstance(item, dict):
            _schema(item, found)
        elif key == "role" and isinstance(item, str):
            found["roles"].add(f"{here}: {item}")
        elif key == "type" and isinstance(item, str):
            found["types"].add(f"{here}: {item}")
        elif here in TOOL_NAMES and isinstance(item, str):
            found["tools"].add(item)
        else:
            _walk(item, here, found)


def _schema(node: Any, found: Parts) -> None:
    if isinstance(node, list):
        for item in node:
            _schema(item, found)
        return
    if not isinstance(node, dict):
        return
    for keyword, value in node.items():
        found["schema"].add(keyword)
        if keyword in NAMED_SUBSCHEMAS and isinstance(value, dict):
            for subschema in value.values():
                _schema(subschema, found)
        elif keyword not in DATA_KEYWORDS:
            _schema(value, found)


def parts_of(documents: list[dict]) -> Parts:
    """Every part any of `documents` has."""
    found: Parts = {kind: set() for kind in KINDS}
    for document in documents:
        for kind, named in parts(document).items():
            found[kind] |= named
    return found


@dataclass(frozen=True)
class Change:
    """The parts of one kind that the newer version sends and the older did not (`added`), and the reverse."""

    kind: str
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def title(self) -> str:
        return KINDS[self.kind]


def compare(older: list[dict], newer: list[dict]) -> list[Change]:
    """What `newer`'s requests have that `older`'s did not, and what they no longer have, by kind of part; a field
    whose parent is new (or gone) as well is counted under it rather than named."""
    before, after = parts_of(older), parts_of(newer)
    changes = [Change(kind, *(_outermost(found) if kind == "fields" else tuple(sorted(found))
                              for found in (after[kind] - before[kind], before[kind] - after[kind])))
               for kind in KINDS]
    return [change for change in changes if change.added or change.removed]


def _parent(field: str) -> str:
    return field.rpartition(".")[0].removesuffix("[]") if "." in field else ""


def _outermost(fields: set[str]) -> tuple[str, ...]:
    """`fields`, each under another of them counted under the outermost: `safeguards (and 55 fields under it)`."""
    def outermost(field: str) -> str:
        parent = _parent(field)
        return outermost(parent) if parent in fields else field

    under: dict[str, int] = {}
    for field in fields:
        top = outermost(field)
        under[top] = under.get(top, 0) + (field != top)
    return tuple(f"{top} (and the {count} field{'s' if count > 1 else ''} under it)" if count else top
                 for top, count in sorted(under.items()))


def checks_judging(cases: list[Case]) -> set[str]:
    """The checks whose scope takes one of `cases` (the agent checks aside: they judge a run, not a request)."""
    return {check.id for check in REGISTRY.values() if check.kind != "agent" and any(map(check.applies, cases))}
