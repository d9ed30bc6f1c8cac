"""The reference server's ASGI application.

A route it does not serve is answered 404 with LM Studio's wording; LM Studio itself answers 200 (the
`unknown-route-200` fault).

Faults come from two places: the app's own set, and a path prefix `/faults/<name>[,<name>...]` in front of any
route. The prefix lets one running server answer as every fault at once, so a suite can test a check against
the whole catalogue without starting a server per fault.

A path prefix `/streams/<form>` (a seed, or `SEED:FEATURE,...`: lmconform.reference.streams) streams every answer
in that generated wire form instead; a request can also name one in its body (`lmconform-stream=<form>`).

A path prefix `/changed-by` (before or after the faults') answers as without it, and names in the
`X-Lmconform-Changed-By` header the faults that could change this answer: those of its stages that would
(`changes_traced` in lmconform.reference.faults.registry) and the flags a door asked about. What the fault
catalogue's runs ask the clean server.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from lmconform.api_table import APIS
from lmconform.reference.faults import apply, catalogue, parse_faults
from lmconform.reference.faults.registry import changes_traced
from lmconform.reference.faults.server import UNKNOWN_ROUTE_200
from lmconform.reference.faults.transport import ANSWER, ARRIVAL
from lmconform.reference.raw import RawAnswer
from lmconform.reference.store import DEFAULT_STORE_SIZE
from lmconform.reference.streams import DEFAULT_PAUSE_S, parse_form
from lmconform.reference.wire import unknown_route

_FAULT_PREFIX = re.compile(r"/faults/([^/]*)(/.*)?")
ARRIVAL_FAULTS = frozenset(fault.name for fault in ARRIVAL.faults)  # those that may answer before any door
_STREAM_PREFIX = re.compile(r"/streams/([^/]*)(/.*)?")
_CHANGED_BY_PREFIX = re.compile(r"/changed-by(/.*)?")
CHANGED_BY_HEADER = "X-Lmconform-Changed-By"
Endpoint = Callable[[Request, frozenset[str]], Awaitable[Response]]
SocketEndpoint = Callable[[WebSocket, frozenset[str]], Awaitable[None]]


class _Routes:
    """Every door's routes (`ROUTES` of each API's reference/door.py): a path as it is, or a template whose
    `{name}` parts stand for one path segment each (`/v1/responses/{id}`); the endpoint reads them from the path."""

    def __init__(self) -> None:
        self.exact: dict[tuple[str, str], Endpoint] = {}
        self.templates: list[tuple[str, re.Pattern[str], Endpoint]] = []
        self.sockets: dict[str, SocketEndpoint] = {}  # a WebSocket's path (the Responses API's WebSocket mode)
        for api in APIS.values():
            sockets = api.room("reference.websocket")
            self.sockets.update(sockets.WEBSOCKET_ROUTES if sockets is not None else {})
            door = api.room("reference.door")
            for (method, path), endpoint in (door.ROUTES if door is not None else {}).items():
                if "{" in path:
                    pattern = re.compile(re.sub(r"\\{[a-z_]+\\}", "[^/]+", re.escape(path)))
                    self.templates.append((method, pattern, endpoint))
                else:
                    self.exact[method, path] = endpoint

    def endpoint(self, method: str, path: str) -> Endpoint | None:
        found = self.exact.get((method, path))
        if found is None:
            found = next((endpoint for wanted, pattern, endpoint in self.templates
                          if wanted == method and pattern.fullmatch(path)), None)
        return found


def _prefixed(path: str) -> tuple[str, frozenset[str], bool]:
    """The route under the path's prefixes, the faults they name, and whether one asks for the trace; ValueError for a
    fault the catalogue does not hold. `/faults/A/faults/B/…` serves A and B: a gate in front of a variant of the
    server (LM Studio's dialect at `/faults/responses-function-tools-only`) reaches each fault under the variant's
    prefix."""
    faults, traced = frozenset[str](), False
    while True:
        if (prefix := _FAULT_PREFIX.fullmatch(path)) is not None:
            faults, path = faults | parse_faults(prefix[1].split(",")), prefix[2] or "/"
        elif (prefix := _CHANGED_BY_PREFIX.fullmatch(path)) is not None:
            traced, path = True, prefix[1] or "/"
        else:
            return path, faults, traced


class AskedFaults(frozenset[str]):
    """The faults on, remembering every name a door asked about (`name in faults`, as the doors ask)."""

    asked: set[str]

    def __new__(cls, names: frozenset[str]) -> AskedFaults:
        made = super().__new__(cls, names)
        made.asked = set()
        return made

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self.asked.add(name)
        return super().__contains__(name)


class _Dispatcher:
    """Every method and path, routed by hand, so that an unknown route gets LM Studio's words and, with the
    `unknown-route-200` fault, LM Studio's status."""

    def __init__(self, faults: frozenset[str]) -> None:
        self.faults = faults
        self.routes = _Routes()
        self.flags = frozenset(name for name, fault in catalogue().items() if fault.stage is None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.respond(Request(scope, receive))
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        try:
            path, named, traced = _prefixed(request.url.path)
        except ValueError as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        faults = self.faults | named
        if not traced:
            return await self._respond(request, path, faults)
        with changes_traced() as changing:
            asked = AskedFaults(faults)
            response = await self._respond(request, path, asked)
        changing |= asked.asked & self.flags  # a flag acts only where a door asks about it
        sent = response.answer if isinstance(response, RawAnswer) else response
        sent.headers[CHANGED_BY_HEADER] = ",".join(sorted(changing))
        return response

    async def _respond(self, request: Request, path: str, faults: frozenset[str]) -> Response:
        streams = _STREAM_PREFIX.fullmatch(path)
        if streams is not None:
            try:
                request.state.stream_form = parse_form(streams[1])
            except ValueError as error:
                return JSONResponse({"error": str(error)}, status_code=404)
            path = streams[2] or "/"
        endpoint = self.routes.endpoint(request.method, path)
        if endpoint is None:
            return unknown_route(request.method, path, UNKNOWN_ROUTE_200 in faults)
        early = apply(ARRIVAL, faults, None, request, await request.body()) if ARRIVAL_FAULTS & faults else None
        if early is not None:
            return early
        return apply(ANSWER, faults, await endpoint(request, faults), request)


class _SocketDispatcher:
    """A WebSocket's path, with the same fault prefix as any route; an upgrade to a path without one is refused as
    the route it is not (a 404, or LM Studio's 200 with the `unknown-route-200` fault)."""

    def __init__(self, faults: frozenset[str], routes: _Routes) -> None:
        self.faults = faults
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        websocket = WebSocket(scope, receive, send)
        try:  # the prefixes as over HTTP; a WebSocket's answers are not traced, as every event is its own
            path, named, _ = _prefixed(websocket.url.path)
        except ValueError as error:
            await websocket.send_denial_response(JSONResponse({"error": str(error)}, status_code=404))
            return
        faults = self.faults | named
        endpoint = self.routes.sockets.get(path)
        if endpoint is None:
            await websocket.send_denial_response(unknown_route("GET", path, UNKNOWN_ROUTE_200 in faults))
            return
        await endpoint(websocket, faults)


def create_app(faults: frozenset[str] = frozenset(), store_size: int = DEFAULT_STORE_SIZE,
               stream_pause: float = DEFAULT_PAUSE_S) -> Starlette:
    """The server, with `faults` on every request and room for `store_size` responses to chain from. Set
    `app.state.stopping` (a threading.Event) when the server stops, so that streams held open on purpose (the
    `stall` fault) end instead of delaying the shutdown. `stream_pause` is the pause after a write of a generated
    form that a reader must get on its own (0 in process, where every write is a message anyway)."""
    dispatcher = _Dispatcher(parse_faults(faults))
    app = Starlette(routes=[Route("/{path:path}", dispatcher),
                            WebSocketRoute("/{path:path}", _SocketDispatcher(dispatcher.faults, dispatcher.routes))])
    app.state.stopping = threading.Event()
    app.state.stream_pause = stream_pause
    app.state.store_size = store_size
    app.state.stores = {}  # each door's conversations (lmconform.reference.store.store_of)
    app.state.seen_requests = set()  # digests of the requests answered once (model-loading-once)
    return app
