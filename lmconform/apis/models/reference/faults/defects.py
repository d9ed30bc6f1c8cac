"""The defects of `GET /v1/models`."""

from __future__ import annotations

from starlette.responses import PlainTextResponse, Response

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import fault


@fault("models-missing", stages.REPLY, api="models",
       summary="`GET /v1/models` answers 404 text/plain",
       seen_in="mock servers")
def models_missing(reply: Response) -> Response:
    return PlainTextResponse("Not Found", status_code=404)
