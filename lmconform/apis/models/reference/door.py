"""`GET /v1/models` as LM Studio answers it: the one model the reference server serves."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lmconform.apis.models import API
from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import apply
from lmconform.reference.wire import DEFAULT_MODEL


async def list_models(request: Request, faults: frozenset[str]) -> Response:
    entry = {"id": DEFAULT_MODEL, "object": "model", "owned_by": "organization_owner"}  # LM Studio's: no `created`
    models = apply(stages.LIST, faults, [entry])
    return apply(stages.REPLY, faults, JSONResponse({"object": "list", "data": models}))


ROUTES = {(API.method, API.path): list_models}
