"""The variant of `GET /v1/models`: model entries as real servers list them, a valid form no check may report above
INFO."""

from __future__ import annotations

import json

from starlette.responses import JSONResponse, Response

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import variant


@variant("models-extra-keys", stages.REPLY, api="models",
         summary="model entries carry extra keys (`aliases`, `tags`, `status`), and an embedding model is listed "
                 "second",
         seen_in="llama.cpp's llama-server (test_basic.py); LM Studio lists embedding models (#763)")
def models_extra_keys(reply: Response) -> Response:
    body = json.loads(reply.body)
    first = {**body["data"][0], "aliases": [], "tags": [], "status": {"value": "loaded"}}
    embedding = {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"}
    return JSONResponse({**body, "data": [first, embedding]})
