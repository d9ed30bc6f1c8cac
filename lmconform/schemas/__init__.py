"""The wire's shape: JSON Schemas (Draft 2020-12) of every object lmconform sends and receives — chat completion
requests, bodies and chunks, Responses requests, objects and each stream event, Anthropic Messages requests,
messages and stream events, LM Studio's native chat requests, results and stream events, the model list and error
bodies — each requirement graded MUST, SHOULD or INFO by the annotation `x-lmconform-level` (docs/schemas.md).

The documents ship beside this module. `schema_set(profile)` gives them with the profile's overlays applied (LM
Studio's dialect for `lmstudio` and for the reference server, which answers as LM Studio does but for the tool types
of Responses, which it takes as OpenAI does), each schema compiled
into a validator once; `schema_for` picks the schema of a payload by API, kind and, for an event of an API whose
events are told apart by `type`, that type. The `schema.*` checks validate every answer with them, and generated
requests start from the request schemas.
"""

from __future__ import annotations

import posixpath
from functools import cache
from typing import Any

from lmconform.api_table import APIS
from lmconform.schemas.documents import BASE_URI, LEVEL_KEY, OverlayError, base_documents, patched, schema_paths
from lmconform.schemas.grading import SchemaFinding, SchemaSet, json_type

# The payloads of each API, by kind: what a client sends ("request"), a 2xx JSON body ("body"), each `data:` payload
# of a 2xx event stream ("event"), and the JSON body of a 4xx or 5xx answer ("error"), as each API's entry names them.
PAYLOAD_SCHEMAS: dict[tuple[str, str], str] = {
    (api.name, kind): posixpath.normpath(f"{api.name}/{path}") for api in APIS.values()
    for kind, path in api.schemas.items()
}
KINDS = ("request", "body", "event", "error")
# Which overlays each profile of lmconform.target.PROFILES applies, in order.
# The reference server answers as LM Studio does but for the tool types of Responses, which it takes as OpenAI does.
PROFILE_OVERLAYS: dict[str | None, tuple[str, ...]] = {None: (), "lmstudio": ("lmstudio", "lmstudio-tool-types"),
                                                       "reference": ("lmstudio",)}


@cache
def schema_set(profile: str | None = None) -> SchemaSet:
    """The schemas as `profile` reads them, built once per profile."""
    if profile not in PROFILE_OVERLAYS:
        raise OverlayError(f"no schema profile {profile!r} (known: {', '.join(map(str, PROFILE_OVERLAYS))})")
    return SchemaSet(patched(base_documents(), *PROFILE_OVERLAYS[profile]))


@cache
def event_schemas(api: str) -> dict[str, str]:
    """Event `type` → the schema of that event, for an API whose event schema dispatches on `type` (Responses,
    Messages, native chat; none for chat), read from the dispatcher's own branches, so that the dispatcher and this
    table cannot disagree."""
    path = PAYLOAD_SCHEMAS.get((api, "event"))
    if path is None:
        return {}
    dispatcher = base_documents()[BASE_URI + path]
    folder = path.rpartition("/")[0]
    found = {}
    for branch in dispatcher.get("allOf", []):
        const = branch.get("if", {}).get("properties", {}).get("type", {}).get("const")
        target = branch.get("then", {}).get("$ref", "")
        if const and target.endswith(".json"):
            found[const] = posixpath.normpath(f"{folder}/{target}")
    return found


@cache
def _member_dispatch(path: str) -> tuple[str, list, str, str] | None:
    """For a dispatcher that picks its branch by whether a member holds a value that counts (chat's stream payload:
    an `error` member that is not null, false, 0, "", {} or [] makes an in-stream error), the member, the values that
    do not count, and the schemas of the two branches; read from its `if`, `then` and `else`."""
    dispatcher = base_documents()[BASE_URI + path]
    condition, folder = dispatcher.get("if", {}), path.rpartition("/")[0]
    required = condition.get("required", [])
    if len(required) != 1 or "then" not in dispatcher or "else" not in dispatcher:
        return None
    excluded = condition.get("properties", {}).get(required[0], {}).get("not", {}).get("enum")
    branches = [dispatcher[branch].get("$ref", "") for branch in ("then", "else")]
    if excluded is None or not all(branch.endswith(".json") for branch in branches):
        return None
    then, else_ = (posixpath.normpath(f"{folder}/{branch}") for branch in branches)
    return required[0], excluded, then, else_


def schema_for(api: str, kind: str, payload: Any = None) -> str:
    """The schema (its path, `chat/chunk.json`) a payload of `api` and `kind` is validated against. A stream payload
    goes straight to the branch its dispatcher would take — an event told apart by `type` to the schema of its type
    (the dispatcher for a type it does not know), one told apart by a member (chat's in-stream error) to its
    branch — so that each is checked by one schema instead of every branch."""
    path = PAYLOAD_SCHEMAS[(api, kind)]
    if kind != "event" or not isinstance(payload, dict):
        return path
    by_member = _member_dispatch(path)
    if by_member is not None:
        member, excluded, then, else_ = by_member
        return then if payload.get(member, None) not in excluded else else_
    kind_of_event = payload.get("type")
    return event_schemas(api).get(kind_of_event, path) if isinstance(kind_of_event, str) else path


def validate(api: str, kind: str, payload: Any, profile: str | None = None) -> list[SchemaFinding]:
    """Every finding on one payload."""
    return schema_set(profile).findings(schema_for(api, kind, payload), payload)


__all__ = ["BASE_URI", "KINDS", "LEVEL_KEY", "PAYLOAD_SCHEMAS", "PROFILE_OVERLAYS", "OverlayError", "SchemaFinding",
           "SchemaSet", "base_documents", "event_schemas", "json_type", "schema_for", "schema_paths", "schema_set",
           "validate"]
