"""The defects of `GET /v1/models`."""

from __future__ import annotations

import json

from starlette.responses import JSONResponse, PlainTextResponse, Response

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import fault


@fault("models-missing", stages.REPLY, api="models",
       summary="`GET /v1/models` answers 404 text/plain",
       seen_in="mock servers")
def models_missing(reply: Response) -> Response:
    return PlainTextResponse("Not Found", status_code=404)


@fault("models-context-length-string", stages.REPLY, api="models",
       summary='the context length a model entry states is a string (`"max_context_length": "7168"`)',
       seen_in="servers that pass a loader's settings through as text; opencode and Codex size their history by "
               "the number")
def models_context_length_string(reply: Response) -> Response:
    body = json.loads(bytes(reply.body))
    return JSONResponse({**body, "data": [{**entry, "max_context_length": str(entry["max_context_length"])}
                                          for entry in body["data"]]})
