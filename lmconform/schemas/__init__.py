"""The wire's shape: JSON Schemas (Draft 2020-12) of every object lmconform sends and receives — chat completion
requests, bodies and chunks, Responses requests, objects and each stream event, Anthropic Messages requests,
messages and stream events, LM Studio's native chat requests, results and stream events, the model list and error
bodies — each requirement graded MUST, SHOULD or INFO by the annotation `x-lmconform-level` (docs/schemas.md).

The documents ship beside this module. `schema_set(profile)` gives them with the profile's overlays applied (LM
Studio's dialect for `lmstudio` and for the reference server, which answers as LM Studio does), each schema compiled
into a validator once; `schema_for` picks the schema of a payload by API, kind and, for an event of an API whose
events are told apart by `type`, that type. The `schema.*` checks validate every answer with them, and generated
requests start from the request schemas.
"""

from __future__ import annotations

import posixpath
from functools import cache
from typing import Any

from lmconform.schemas.documents import BASE_URI, LEVEL_KEY, OverlayError, base_documents, patched, schema_paths
from lmconform.schemas.grading import SchemaFinding, SchemaSet, json_type

# The payloads of each API, by kind: what a client sends ("request"), a 2xx JSON body ("body"), each `data:` payload
# of a 2xx event stream ("event"), and the JSON body of a 4xx or 5xx answer ("error").
PAYLOAD_SCHEMAS: dict[tuple[str, str], str] = {
    ("chat", "request"): "chat/request.json",
    ("chat", "body"): "chat/completion.json",
    ("chat", "event"): "chat/stream-payload.json",
    ("chat", "error"): "chat/error.json",
    ("responses", "request"): "responses/request.json",
    ("responses", "body"): "responses/response.json",
    ("responses", "event"): "responses/events/event.json",
    ("responses", "error"): "responses/error.json",
    ("messages", "request"): "messages/request.json",
    ("messages", "body"): "messages/message.json",
    ("messages", "event"): "messages/events/event.json",
    ("messages", "error"): "messages/error.json",
    ("native_chat", "request"): "native_chat/request.json",
    ("native_chat", "body"): "native_chat/result.json",
    ("native_chat", "event"): "native_chat/events/event.json",
    ("native_chat", "error"): "native_chat/error.json",
    ("models", "body"): "models/list.json",
    ("models", "error"): "common/error.json",
}
KINDS = ("request", "body", "event", "error")
# Which overlays each profile of lmconform.target.PROFILES applies, in order.
PROFILE_OVERLAYS: dict[str | None, tuple[str, ...]] = {None: (), "lmstudio": ("lmstudio",), "reference": ("lmstudio",)}


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


# What `chat/stream-payload.json` takes for no error: openai-python raises only for a truthy `error` member.
FALSY = (None, False, 0, "", {}, [])


def schema_for(api: str, kind: str, payload: Any = None) -> str:
    """The schema (its path, `chat/chunk.json`) a payload of `api` and `kind` is validated against. A stream payload
    goes straight to the branch its dispatcher would take — an event told apart by `type` to the schema of its type
    (the dispatcher for a type it does not know), a chat payload to the chunk or the in-stream error — so that each
    is checked by one schema instead of every branch."""
    path = PAYLOAD_SCHEMAS[(api, kind)]
    if kind != "event" or not isinstance(payload, dict):
        return path
    if api == "chat":
        return "chat/error.json" if payload.get("error", None) not in FALSY else "chat/chunk.json"
    return event_schemas(api).get(payload.get("type"), path) if isinstance(payload.get("type"), str) else path


def validate(api: str, kind: str, payload: Any, profile: str | None = None) -> list[SchemaFinding]:
    """Every finding on one payload."""
    return schema_set(profile).findings(schema_for(api, kind, payload), payload)


__all__ = ["BASE_URI", "KINDS", "LEVEL_KEY", "PAYLOAD_SCHEMAS", "PROFILE_OVERLAYS", "OverlayError", "SchemaFinding",
           "SchemaSet", "base_documents", "event_schemas", "json_type", "schema_for", "schema_paths", "schema_set",
           "validate"]
