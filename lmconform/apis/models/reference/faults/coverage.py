"""The faults of `GET /v1/models` that docs/coverage.md lists."""

from __future__ import annotations

import json

from starlette.responses import JSONResponse, Response

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import fault


@fault("models-bare-list", stages.REPLY, api="models",
       summary="`GET /v1/models` answers 200 with a bare JSON list of model entries, no `object`/`data` envelope",
       seen_in="hand-written mock servers")
def models_bare_list(reply: Response) -> Response:
    return JSONResponse(json.loads(bytes(reply.body))["data"])
