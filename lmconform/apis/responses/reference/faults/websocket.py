"""Faults of the Responses API's WebSocket mode at `/v1/responses`, each a way a server broke what a client of that
mode (Codex CLI first) relies on: the events of a response in their order, the response the connection keeps for a
`store: false` continuation, `previous_response_not_found` as an `error` event, a failed continuation forgetting
the response it named, an answer finished before the socket closes. And the answer of a server that does not offer
the mode: the upgrade refused, a limit, no defect."""

from __future__ import annotations

from lmconform.reference.faults.registry import flag

WEBSOCKET_NOT_OFFERED = flag(
    "responses-websocket-not-offered", api="responses", variant=True,
    summary="the WebSocket upgrade of `/v1/responses` is refused as a route the server does not offer (404)",
    seen_in="LM Studio 0.4 and llama.cpp's llama-server, which serve the Responses API over HTTP only")

WEBSOCKET_EVENTS_OUT_OF_ORDER = flag(
    "websocket-events-out-of-order", api="responses",
    summary="over the WebSocket, `response.completed` is sent right after `response.created`, before the output's "
            "events",
    seen_in="servers that send the terminal event from another task than the output's, unsynchronised")

WEBSOCKET_STORE_FALSE_FORGOTTEN = flag(
    "websocket-store-false-forgotten", api="responses",
    summary="the WebSocket connection keeps no response in memory: a `store: false` response cannot be continued "
            "on the socket that answered it (`previous_response_not_found`)",
    seen_in="servers that chain over the socket through their response store alone")

WEBSOCKET_ERROR_AS_CLOSE = flag(
    "websocket-error-as-close", api="responses",
    summary="over the WebSocket, a request refused (an unknown `previous_response_id` among them) closes the socket "
            "(1011) instead of sending an `error` event",
    seen_in="servers whose socket handler lets the create endpoint's exception end the connection")

WEBSOCKET_CLOSED_MID_RESPONSE = flag(
    "websocket-closed-mid-response", api="responses",
    summary="over the WebSocket, the socket is closed halfway through a response's events, before its terminal "
            "event",
    seen_in="servers whose socket handler ends the connection when the generation's task ends early")

WEBSOCKET_FAILED_CONTINUATION_KEPT = flag(
    "websocket-failed-continuation-kept", api="responses",
    summary="over the WebSocket, a continuation that fails leaves the response it named in the connection's memory: "
            "the stale state is continued again",
    seen_in="connection caches that evict only on a new response")

WEBSOCKET_UPGRADE_200 = flag(
    "websocket-upgrade-200", api="responses",
    summary="the WebSocket upgrade of `/v1/responses` is answered 200 with a JSON body: neither a socket nor a "
            "refusal",
    seen_in="servers that route a GET of /v1/responses to a listing or a health answer")
