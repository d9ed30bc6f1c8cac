"""`POST /v1/echo`: the text sent, sent back."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lmconform.apis.echo import API
from lmconform.apis.echo.reference.faults import ANSWER
from lmconform.reference.faults.registry import apply


async def echo(request: Request, faults: frozenset[str]) -> Response:
    body = json.loads(await request.body())
    return JSONResponse(apply(ANSWER, faults, {"object": "echo", "text": body.get("text", "")}))


ROUTES = {(API.method, API.path): echo}
