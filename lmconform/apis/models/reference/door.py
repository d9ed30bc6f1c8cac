"""`GET /v1/models` as LM Studio answers it: the one model the reference server serves."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lmconform.apis.models import API
from lmconform.apis.models.reference import stages
from lmconform.apis.models.reference.faults.variants import LLAMA_CPP_CONTEXT
from lmconform.reference.faults.registry import apply
from lmconform.reference.faults.server import UNKNOWN_ROUTE_200
from lmconform.reference.model import CONTEXT_WORDS
from lmconform.reference.wire import DEFAULT_MODEL, unknown_route


async def list_models(request: Request, faults: frozenset[str]) -> Response:
    # LM Studio's entry (no `created`), with the context length as LM Studio's own REST API names it: agents size
    # their history by it.
    entry = {"id": DEFAULT_MODEL, "object": "model", "owned_by": "organization_owner",
             "max_context_length": CONTEXT_WORDS}
    models = apply(stages.LIST, faults, [entry])
    return apply(stages.REPLY, faults, JSONResponse({"object": "list", "data": models}))


async def props(request: Request, faults: frozenset[str]) -> Response:
    # llama-server's properties, the context a request gets among them (the context of one slot); a route only
    # llama.cpp offers, so the server answers it only as llama.cpp.
    if LLAMA_CPP_CONTEXT not in faults:
        return unknown_route(request.method, "/props", UNKNOWN_ROUTE_200 in faults)
    return JSONResponse({"default_generation_settings": {"n_ctx": CONTEXT_WORDS}, "total_slots": 1,
                         "model_path": f"{DEFAULT_MODEL}.gguf"})


ROUTES = {(API.method, API.path): list_models, ("GET", "/props"): props}
