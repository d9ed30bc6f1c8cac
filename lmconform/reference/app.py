"""The reference server's ASGI application.

Faults come from two places: the app's own set, and a path prefix `/faults/<name>[,<name>...]` in front of any
route. The prefix lets one running server answer as every fault at once, so a suite can test a check against
the whole catalogue without starting a server per fault.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from lmconform.reference.chat import DEFAULT_MODEL, chat_completions
from lmconform.reference.faults import Stage, apply, parse_faults
from lmconform.reference.responses import create_response, get_response
from lmconform.reference.store import DEFAULT_STORE_SIZE, ResponseStore

_FAULT_PREFIX = re.compile(r"/faults/([^/]*)(/.*)?")
# A path that ends in an id is looked up by its pattern; the endpoint reads the id from the path.
_ID_PATH = re.compile(r"(/v1/responses/)[^/]+")


async def list_models(request: Request, faults: frozenset[str]) -> Response:
    entry = {"id": DEFAULT_MODEL, "object": "model", "owned_by": "organization_owner"}  # LM Studio's: no `created`
    models = apply(Stage.MODELS_LIST, faults, [entry])
    return apply(Stage.MODELS_REPLY, faults, JSONResponse({"object": "list", "data": models}))


_ENDPOINTS: dict[tuple[str, str], Callable[[Request, frozenset[str]], Awaitable[Response]]] = {
    ("GET", "/v1/models"): list_models,
    ("POST", "/v1/chat/completions"): chat_completions,
    ("POST", "/v1/responses"): create_response,
    ("GET", "/v1/responses/{id}"): get_response,
}


class _Dispatcher:
    """Every method and path, routed by hand: LM Studio answers 200 to whatever it does not serve, where a
    Starlette route would answer 404 or 405."""

    def __init__(self, faults: frozenset[str]) -> None:
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.respond(Request(scope, receive))
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        path, faults = request.url.path, self.faults
        prefix = _FAULT_PREFIX.fullmatch(path)
        if prefix is not None:
            try:
                faults = faults | parse_faults(prefix[1].split(","))
            except ValueError as error:
                return JSONResponse({"error": str(error)}, status_code=404)
            path = prefix[2] or "/"
        endpoint = _ENDPOINTS.get((request.method, _ID_PATH.sub(r"\1{id}", path)))
        if endpoint is None:
            return JSONResponse({"error": f"Unexpected endpoint or method. ({request.method} {path})"})
        return await endpoint(request, faults)


def create_app(faults: frozenset[str] = frozenset(), store_size: int = DEFAULT_STORE_SIZE) -> Starlette:
    """The server, with `faults` on every request and room for `store_size` responses to chain from. Set
    `app.state.stopping` (a threading.Event) when the server stops, so that streams held open on purpose (the
    `stall` fault) end instead of delaying the shutdown."""
    app = Starlette(routes=[Route("/{path:path}", _Dispatcher(parse_faults(faults)))])
    app.state.stopping = threading.Event()
    app.state.store = ResponseStore(store_size)
    return app
