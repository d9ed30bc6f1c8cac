"""The Responses API's WebSocket mode at `/v1/responses`, as OpenAI's API serves it.

A client opens a WebSocket and sends `response.create` messages: the fields of a `POST /v1/responses` body beside
`"type": "response.create"` (`stream` is implied). Each is answered with the events the SSE stream of the same request
carries (`response.created` … `response.completed`), one JSON text frame each, in order; the next message is read
once that answer has ended, so responses over one socket are sequential. A request refused is one `error` event
(`{"type": "error", "status": 400, "error": {…}}`), and the socket stays open.

The connection keeps in memory the response it answered last, whatever its `store`: a `store: false` response can be
continued by `previous_response_id` on the same socket, not after a reconnect, where the id answers
`previous_response_not_found` and the client sends its whole input again. A continuation that fails evicts the
response it named from that memory (a `store: true` one is still found in the server's store)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from lmconform.apis.responses import API
from lmconform.apis.responses.reference.door import create_response
from lmconform.apis.responses.reference.faults.websocket import (
    WEBSOCKET_CLOSED_MID_RESPONSE,
    WEBSOCKET_ERROR_AS_CLOSE,
    WEBSOCKET_EVENTS_OUT_OF_ORDER,
    WEBSOCKET_FAILED_CONTINUATION_KEPT,
    WEBSOCKET_NOT_OFFERED,
    WEBSOCKET_STORE_FALSE_FORGOTTEN,
    WEBSOCKET_UPGRADE_200,
)
from lmconform.reference.faults.server import UNKNOWN_ROUTE_200
from lmconform.reference.store import Entry, ResponseStore, store_of
from lmconform.reference.wire import unknown_route

CREATE = "response.create"
CLOSED_BY_ERROR = 1011  # "internal error": how a server that ends the socket on a refusal closes it


class ConnectionMemory(ResponseStore):
    """The response a connection answered last, in front of the server's store: looked up first, kept whatever its
    `store`, and handed on to the server's store when the request asked it stored."""

    keeps_unstored = True

    def __init__(self, server: ResponseStore) -> None:
        super().__init__(capacity=1)
        self.server = server
        self.stored = True  # the `store` of the request being answered

    def get(self, response_id: str) -> Entry | None:
        return super().get(response_id) or self.server.get(response_id)

    def add(self, response_id: str, body: bytes, history: Any, root: str, input_items: Any = ()) -> None:
        super().add(response_id, body, history, root, input_items)
        if self.stored:
            self.server.add(response_id, body, history, root, input_items)

    def evict(self, response_id: str) -> None:
        """Forget it here; the server's store keeps what it stored."""
        super().delete(response_id)


async def websocket_mode(websocket: WebSocket, faults: frozenset[str]) -> None:
    if WEBSOCKET_NOT_OFFERED in faults:
        await websocket.send_denial_response(unknown_route("GET", API.path, UNKNOWN_ROUTE_200 in faults))
        return
    if WEBSOCKET_UPGRADE_200 in faults:
        await websocket.send_denial_response(JSONResponse({"object": "list", "data": []}))
        return
    await websocket.accept()
    server = store_of(websocket, API.name)
    memory = ConnectionMemory(server)
    try:
        while True:
            message = await websocket.receive_text()
            if WEBSOCKET_STORE_FALSE_FORGOTTEN in faults:
                memory = ConnectionMemory(server)
            events = await _answer(websocket, message, memory, faults)
            if events[-1]["type"] == "error" and WEBSOCKET_ERROR_AS_CLOSE in faults:
                await websocket.close(CLOSED_BY_ERROR)
                return
            if WEBSOCKET_CLOSED_MID_RESPONSE in faults and len(events) > 2:
                await _send(websocket, events[:len(events) // 2])
                await websocket.close(CLOSED_BY_ERROR)
                return
            if WEBSOCKET_EVENTS_OUT_OF_ORDER in faults and len(events) > 2:
                events = [events[0], events[-1], *events[1:-1]]
            await _send(websocket, events)
    except WebSocketDisconnect:
        return


async def _send(websocket: WebSocket, events: list[dict[str, Any]]) -> None:
    for event in events:
        await websocket.send_text(json.dumps(event, ensure_ascii=False))


async def _answer(websocket: WebSocket, message: str, memory: ConnectionMemory,
                  faults: frozenset[str]) -> list[dict[str, Any]]:
    """The events that answer one message: a response's, or one `error` event."""
    try:
        sent = json.loads(message)
    except ValueError:
        return [_error(400, "Message must be valid JSON.", None, "invalid_json")]
    if not isinstance(sent, dict) or sent.get("type") != CREATE:
        kind = sent.get("type") if isinstance(sent, dict) else None
        return [_error(400, f"Unsupported event type {kind!r}: expected {CREATE!r}.", "type", "unknown_event_type")]
    body = {key: value for key, value in sent.items() if key != "type"}
    body["stream"] = True
    memory.stored = body.get("store") is not False
    answered = await create_response(_as_request(websocket, body), faults, memory)
    if isinstance(answered, StreamingResponse):
        return [event async for event in _events(answered)]
    refused = json.loads(bytes(answered.body))
    previous = body.get("previous_response_id")
    if isinstance(previous, str) and WEBSOCKET_FAILED_CONTINUATION_KEPT not in faults:
        memory.evict(previous)
    error = refused.get("error") if isinstance(refused, dict) else None
    if not isinstance(error, dict):
        error = {"message": str(error), "type": "invalid_request_error", "param": None, "code": None}
    return [{"type": "error", "status": answered.status_code, "error": error}]


def _error(status: int, message: str, param: str | None, code: str) -> dict[str, Any]:
    return {"type": "error", "status": status,
            "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def _as_request(websocket: WebSocket, body: dict[str, Any]) -> Request:
    """The message as the create endpoint reads a `POST /v1/responses`."""
    data = json.dumps(body).encode()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": data, "more_body": False}

    scope = {**websocket.scope, "type": "http", "method": "POST", "path": API.path, "query_string": b"",
             "headers": [(b"content-type", b"application/json")]}
    return Request(scope, receive)


async def _events(answered: StreamingResponse):
    """The event of each `data:` line of the SSE frames the create endpoint wrote: SSE's own framing (a `[DONE]`
    sentinel) is no event, and a socket has none of it."""
    async for frame in answered.body_iterator:
        text = frame if isinstance(frame, str) else bytes(frame).decode()
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    yield json.loads(line[5:])
                except ValueError:
                    continue


WEBSOCKET_ROUTES = {API.path: websocket_mode}
