"""Small edits faults make to the JSON objects of an answer."""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]


def without(mapping: JsonObject, *keys: str) -> JsonObject:
    return {key: value for key, value in mapping.items() if key not in keys}


def without_nulls(value: Any) -> Any:
    """`value` with every member whose value is null left out, at every depth, as serialisers that skip None do."""
    if isinstance(value, dict):
        return {key: without_nulls(member) for key, member in value.items() if member is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value
