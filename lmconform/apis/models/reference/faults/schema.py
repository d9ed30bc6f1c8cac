"""Faults that change one member of the model entries, each failing the `schema.*` check of the level its schema
gives that member."""

from __future__ import annotations

from typing import Any

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.edits import without
from lmconform.reference.faults.registry import fault

JsonObject = dict[str, Any]


@fault("model-object-missing", stages.LIST, api="models",
       summary="the entries of `GET /v1/models` have no `\"object\": \"model\"`",
       seen_in="hand-written model lists")
def model_object_missing(models: list[JsonObject]) -> list[JsonObject]:
    return [without(model, "object") for model in models]


@fault("model-owned-by-missing", stages.LIST, api="models",
       summary="the entries of `GET /v1/models` have no `owned_by`",
       seen_in="servers that list only the model ids")
def model_owned_by_missing(models: list[JsonObject]) -> list[JsonObject]:
    return [without(model, "owned_by") for model in models]
