"""The shape of an answer: what a client's parser depends on, with every value that varies between runs masked.

Two runs of one case against one server version give the same shape, so a shape that changes between server
versions says that the wire format changed: a field renamed, a type changed, an event added or reordered.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any

from lmconform.api_table import api_of
from lmconform.wire.exchange import NOT_JSON, Exchange
from lmconform.wire.http import HttpExchange
from lmconform.wire.sse import SSEEvent
from lmconform.wire.stdio import StdioExchange
from lmconform.wire.websocket import WebSocketExchange

# What a client reads to tell one error from another, inside an `error` object of any API.
ERROR_ENUMERATIONS = frozenset({"code", "param", "type"})

EMPTY = "empty"
NOT_JSON_TEXT = "not JSON"
DONE = "[DONE]"
REPEATED = "+"


def shape_of(exchange: Exchange, api: str) -> dict:
    """The shape of one answer. Only what the target sent is shaped: the request, and so its key, is not."""
    # String fields whose values are enumerations clients branch on are part of the shape (the API table names
    # them); every other string (ids, model names, free text, tool names, arguments) is masked to "string".
    enumerations = api_of(api).enumerations
    if isinstance(exchange, StdioExchange):
        return _process_shape(exchange, enumerations)
    if isinstance(exchange, WebSocketExchange):
        return _socket_shape(exchange, enumerations)
    assert isinstance(exchange, HttpExchange)
    shape: dict[str, Any] = {"status": exchange.status, "content_type": exchange.content_type or None}
    if exchange.is_event_stream:
        stream = exchange.sse
        shape["events"] = _collapse([_event_shape(event, enumerations) for event in stream.events])
        # Comment lines are left out: every parser skips them, and keep-alives are sent by the clock (sse-starlette
        # writes `: ping` after 15 s of silence), so counting them would make a slow machine's shape differ.
        if stream.issues:
            shape["framing"] = sorted({issue.kind for issue in stream.issues})
    elif not exchange.body:
        shape["body"] = EMPTY
    elif exchange.json is NOT_JSON:
        shape["body"] = NOT_JSON_TEXT
    else:
        shape["body"] = json_shape(exchange.json, enumerations)
    if exchange.error_kind:
        shape["error"] = exchange.error_kind
    if exchange.truncated:
        shape["truncated"] = True
    return dict(sorted(shape.items()))


def _socket_shape(exchange: WebSocketExchange, enumerations: frozenset[str]) -> dict:
    """Over a WebSocket: how the upgrade was answered, then the shape of each text frame (an event), and how the
    socket closed while the answer was awaited."""
    shape: dict[str, Any] = {"upgrade": exchange.status}
    if not exchange.upgraded:
        shape["body"] = EMPTY if not exchange.refusal else NOT_JSON_TEXT if _json(exchange.refusal) is NOT_JSON else \
            json_shape(_json(exchange.refusal), enumerations)
    shape["events"] = _collapse([json_shape(event, enumerations) if event is not NOT_JSON else {"frame": NOT_JSON_TEXT}
                                 for event in map(_json, exchange.frames)])
    if exchange.closed:
        shape["closed"] = exchange.closed.split(" ", 1)[0]  # the close code; its reason is free text
    if exchange.error_kind:
        shape["error"] = exchange.error_kind
    return dict(sorted(shape.items()))


def _json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return NOT_JSON


def _process_shape(exchange: StdioExchange, enumerations: frozenset[str]) -> dict:
    """Over stdio, the case is one conversation: the shape of every message the process wrote, in order."""
    process = exchange.process
    if process is None:  # the bridge never started: it wrote nothing
        return {"messages": []}
    shape: dict[str, Any] = {"messages": _collapse([json_shape(message.value, enumerations)
                                                    for message in process.stdout.messages])}
    if process.stdout.garbage:
        shape["lines_not_json"] = True
    if any(message.split for message in process.stdout.messages):
        shape["messages_split"] = True
    if exchange.error_kind:
        shape["error"] = exchange.error_kind
    return dict(sorted(shape.items()))


def json_shape(value: Any, enumerations: frozenset[str], key: str | None = None) -> Any:
    """Key sets and JSON types, recursively; a string keeps its value only under a key in `enumerations`.

    Integers and other numbers stay apart because typed clients parse them apart (`created: int`).
    """
    if isinstance(value, dict):
        return {
            name: json_shape(item, enumerations | ERROR_ENUMERATIONS if name == "error" else enumerations, name)
            for name, item in sorted(value.items())
        }
    if isinstance(value, list):
        # How many items a list holds depends on the output (tool calls, models installed); which kinds of item
        # it holds, and in which order they first come, does not.
        distinct: list[Any] = []
        for item in value:
            item_shape = json_shape(item, enumerations, key)
            if item_shape not in distinct:
                distinct.append(item_shape)
        return distinct
    if isinstance(value, str):
        return value if key in enumerations else "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "null"


def _event_shape(event: SSEEvent, enumerations: frozenset[str]) -> dict:
    if event.data == DONE:
        shape: dict[str, Any] = {"data": DONE}
    elif not event.data:
        shape = {"data": EMPTY}
    else:
        try:
            shape = {"data": json_shape(json.loads(event.data), enumerations)}
        except ValueError:
            shape = {"data": NOT_JSON_TEXT}
    if event.event != "message":  # the name an event has when the server sends none
        shape["event"] = event.event
    return shape


def _collapse(shapes: list[dict]) -> list[dict]:
    """Consecutive events of one shape become one entry marked `"repeat": "+"`: how many text deltas a stream
    holds depends on the generated text, not on the server."""
    collapsed = []
    for shape, run in groupby(shapes):
        collapsed.append({**shape, "repeat": REPEATED} if len(list(run)) > 1 else shape)
    return collapsed
