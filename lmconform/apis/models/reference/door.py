"""`GET /v1/models` as LM Studio answers it: the one model the reference server serves."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lmconform.apis.models import API
from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import apply
from lmconform.reference.model import CONTEXT_WORDS
from lmconform.reference.wire import DEFAULT_MODEL


async def list_models(request: Request, faults: frozenset[str]) -> Response:
    # LM Studio's entry (no `created`), with the context length as LM Studio's own REST API names it: agents size
    # their history by it.
    entry = {"id": DEFAULT_MODEL, "object": "model", "owned_by": "organization_owner",
             "max_context_length": CONTEXT_WORDS}
    models = apply(stages.LIST, faults, [entry])
    return apply(stages.REPLY, faults, JSONResponse({"object": "list", "data": models}))


ROUTES = {(API.method, API.path): list_models}
