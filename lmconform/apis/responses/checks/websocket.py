"""The Responses API's WebSocket mode at `/v1/responses`, which Codex CLI prefers to HTTP: each `response.create`
message answered with a response's events in order, as JSON text frames, on one socket; a `store: false` response
continued on the socket that answered it; an unknown `previous_response_id` an `error` event that leaves the socket
open; after a reconnect or a failed continuation, `previous_response_not_found`, and the whole input sent again
answered; a compaction (`POST /v1/responses/compact`) sent as the input of a new chain answered with its history. A
refused upgrade (403, 404, 426, LM Studio's unknown route) is a mode not offered: UNSUPPORTED, no finding. Codex CLI
0.171.0, set to use the mode, then tries the upgrade three times and goes on over HTTP (docs/agents.md)."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.responses.checks.chain import error_names_the_item, history_unread, input_tokens
from lmconform.apis.responses.checks.scope import responses_websocket
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_RESPONSES_WEBSOCKET
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, Unsupported
from lmconform.wire.websocket import WebSocketExchange

NOT_FOUND = "previous_response_not_found"
TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def _not_offered(exchange: WebSocketExchange) -> Unsupported:
    return Unsupported(f"the WebSocket upgrade was refused (HTTP {exchange.status}): the mode is not offered. Codex "
                       "CLI uses it only where its provider says `supports_websockets = true` (`[model_providers.<id>]` "
                       "in its config.toml); so set, it tries the upgrade three times, says \"Falling back from "
                       "WebSockets to HTTPS transport\" and does its task over HTTP. Leave the line out (or `false`) "
                       "against this server")


def _socket(observed: Observed) -> WebSocketExchange:
    """The first message's exchange, once the upgrade was accepted; a refusal is the mode not offered."""
    exchange = observed.exchange
    assert isinstance(exchange, WebSocketExchange)
    if exchange.refused:
        raise _not_offered(exchange)
    if not exchange.upgraded:
        raise NotApplicable(f"the upgrade went wrong ({exchange.status_text}): responses.websocket.upgrade_answered "
                            "judges it")
    return exchange


def _turn(observed: Observed, name: str) -> WebSocketExchange:
    played = observed.turns.get(name)
    if played is None or played.exchange is None:
        raise NotApplicable(f"the turn {name!r} was not sent: {played.skipped if played else 'no such turn'}")
    assert isinstance(played.exchange, WebSocketExchange)
    return played.exchange


def _answered(exchange: WebSocketExchange, what: str) -> Iterator[Failure]:
    """A Failure unless the message was answered with a response that completed."""
    if not exchange.succeeded:
        yield Failure(f"{what}: a response's events ending in response.completed", exchange.status_text,
                      exchange.body_excerpt(300))


@check("responses.websocket.upgrade_answered", level=Level.MUST, applies=responses_websocket(),
       ref=OPENAI_RESPONSES_WEBSOCKET, judges_broken_answers=True,
       title="A WebSocket upgrade of `/v1/responses` is accepted (101) or refused as a mode not offered (403, 404, "
             "426); never a 200 or an answer that is no handshake", proven_by=("websocket-upgrade-200",))
def upgrade_answered(observed: Observed) -> Iterator[Failure]:
    # Codex reads a refusal as "no WebSocket here" and, told so by its provider, uses HTTP; an upgrade answered with
    # anything else leaves it retrying a socket that never opens.
    exchange = observed.exchange
    assert isinstance(exchange, WebSocketExchange)
    if exchange.refused:
        raise _not_offered(exchange)
    if exchange.upgraded:
        return
    if exchange.error_kind == "unreachable" or (exchange.status is None and "cannot connect" in (exchange.error or "")):
        raise NotApplicable(exchange.error or "unreachable")
    yield Failure("101 Switching Protocols, or a refusal (403, 404 or 426)",
                  f"HTTP {exchange.status}" if exchange.status is not None else exchange.status_text,
                  exchange.body_excerpt(300))


@check("responses.websocket.events_in_order", level=Level.MUST, applies=responses_websocket(),
       ref=OPENAI_RESPONSES_WEBSOCKET, judges_broken_answers=True,
       title="Over the WebSocket, each `response.create` is answered with its response's events in order: "
             "`response.created` first, the terminal event last, sequence numbers rising, before the socket closes",
       proven_by=("websocket-events-out-of-order", "websocket-closed-mid-response"))
def events_in_order(observed: Observed) -> Iterator[Failure]:
    # Codex reads the socket as it reads the SSE stream: an output event after response.completed is lost, and a
    # socket closed before the terminal event is a turn that never ends.
    answers = [("request", _socket(observed))]
    for name, played in observed.turns.items():
        if isinstance(played.exchange, WebSocketExchange):
            answers.append((name, played.exchange))
    for name, exchange in answers:
        if exchange.error_event is not None and len(exchange.events) == 1:
            continue  # a message refused: one error event is the whole answer
        types = exchange.types
        if exchange.error is not None or exchange.stalled or not types or types[-1] not in TERMINAL:
            yield Failure(f"{name}: the response's events through its terminal event", exchange.status_text,
                          exchange.body_excerpt(300))
            continue
        if types[0] != "response.created":
            yield Failure(f"{name}: response.created first", f"{types[0]} first", exchange.frames[0][:300])
        early = [kind for kind in types[:-1] if kind in TERMINAL]
        if early:
            index = types.index(early[0])
            yield Failure(f"{name}: the terminal event last", f"{early[0]} at {index}, followed by {types[index + 1]}",
                          exchange.frames[index + 1][:300])
        numbers = [event.get("sequence_number") for event in exchange.events if isinstance(event, dict)]
        counted = [number for number in numbers if isinstance(number, int)]
        if counted == numbers and counted != sorted(set(counted)):  # every event numbered, out of order
            yield Failure(f"{name}: sequence_number rising", f"{numbers}", exchange.body_excerpt(300))


@check("responses.websocket.continuation_kept", level=Level.MUST, applies=responses_websocket("continuation"),
       ref=OPENAI_RESPONSES_WEBSOCKET, judges_broken_answers=True,
       title="Over the WebSocket, a `store: false` response is continued by `previous_response_id` on the socket "
             "that answered it, with its history (more input tokens than the first turn)",
       proven_by=("websocket-store-false-forgotten", "chain-ignored"))
def continuation_kept(observed: Observed) -> Iterator[Failure]:
    # What the mode is for: Codex sends only the new items of each turn and counts on the connection for the rest.
    first = _socket(observed)
    if not first.succeeded:
        raise NotApplicable(f"the first response did not complete: {first.status_text}")
    chained = _turn(observed, "chained")
    failures = list(_answered(chained, "the continuation on the same socket"))
    yield from failures
    if failures:
        return
    unread = history_unread(input_tokens(chained.response), input_tokens(first.response),
                            "the first turn's, which the continuation holds",
                            "on the continuation: it was answered without its history")
    if unread is not None:
        yield Failure(*unread, chained.body_excerpt(300))


def _not_found(exchange: WebSocketExchange, what: str) -> Iterator[Failure]:
    error = exchange.error_event
    if error is None or error.get("code") != NOT_FOUND:
        yield Failure(f"{what}: an error event with code {NOT_FOUND}",
                      f"error code {error.get('code')!r}" if error is not None else exchange.status_text,
                      exchange.body_excerpt(300))


@check("responses.websocket.unknown_previous_is_error", level=Level.MUST,
       applies=responses_websocket("previous_response_not_found"), ref=OPENAI_RESPONSES_WEBSOCKET, judges_broken_answers=True,
       title="Over the WebSocket, an unknown `previous_response_id` is an `error` event `previous_response_not_found`, "
             "and the socket answers the next message",
       proven_by=("websocket-error-as-close", "unknown-previous-200"))
def unknown_previous_is_error(observed: Observed) -> Iterator[Failure]:
    # Codex's recovery: on this code it sends its whole transcript again, on the same socket.
    _socket(observed)
    yield from _not_found(_turn(observed, "unknown"), "an unknown previous_response_id")
    yield from _answered(_turn(observed, "after"), "the next message on the same socket")


@check("responses.websocket.store_false_recovery", level=Level.MUST,
       applies=responses_websocket("reconnect (store: false recovery)"), ref=OPENAI_RESPONSES_WEBSOCKET, judges_broken_answers=True,
       title="After a reconnect, continuing a `store: false` response is answered (`previous_response_not_found` or "
             "a response), and the whole input sent again on the new socket is answered",
       proven_by=("websocket-error-as-close",))
def store_false_recovery(observed: Observed) -> Iterator[Failure]:
    # Codex reconnects when a socket drops, and recovers from a forgotten response by sending everything again.
    _socket(observed)
    reconnected = _turn(observed, "reconnected")
    if not reconnected.upgraded:
        raise NotApplicable(f"the new socket was not opened: {reconnected.status_text}")
    if not reconnected.succeeded:
        yield from _not_found(reconnected, "a store: false response continued after a reconnect")
    yield from _answered(_turn(observed, "recovered"), "the whole input sent again on the new socket")


@check("responses.websocket.failed_continuation_evicts", level=Level.SHOULD,
       applies=responses_websocket("failed continuation evicts"), ref=OPENAI_RESPONSES_WEBSOCKET, judges_broken_answers=True,
       title="Over the WebSocket, a continuation that fails evicts the `store: false` response it named: continuing "
             "it again is `previous_response_not_found`",
       proven_by=("websocket-failed-continuation-kept",))
def failed_continuation_evicts(observed: Observed) -> Iterator[Failure]:
    # OpenAI's API drops the state a failed turn may have left half-applied; a client that continues it anyway
    # builds on a response whose follow-up it never saw.
    _socket(observed)
    failed = _turn(observed, "failed")
    if failed.error_event is None:
        raise NotApplicable(f"the failing continuation was not refused with an error event: {failed.status_text}")
    yield from _not_found(_turn(observed, "after-failure"), "the response a failed continuation named, continued again")


@check("responses.websocket.compaction_new_chain_used", level=Level.MUST,
       applies=responses_websocket("compaction in a new chain"), ref=OPENAI_RESPONSES_WEBSOCKET,
       judges_broken_answers=True,
       title="Over the WebSocket, a compaction's output sent as the input of a new chain (no `previous_response_id`) "
             "is answered with the history it stands for (more input tokens than the question alone), or refused with "
             "an `error` event naming it", proven_by=("compaction-input-500", "compaction-input-forgotten"))
def compaction_new_chain_used(observed: Observed) -> Iterator[Failure | Note]:
    # Codex compacts over HTTP and goes on over its socket with the compaction in place of its transcript: an error
    # stops it, and an answer that dropped the item answers a conversation without its history.
    _socket(observed)
    played = observed.turns.get("compacted")
    compacted = played.exchange if played is not None else None
    if compacted is None or not compacted.succeeded:
        answered = compacted.status_text if compacted is not None else "not sent"
        raise Unsupported(f"POST /v1/responses/compact was not answered ({answered}): no compaction to send over the "
                          "socket (responses.compact.is_compaction judges the route)")
    new_chain = _turn(observed, "new-chain")
    error = new_chain.error_event
    status = new_chain.events[-1].get("status") if error is not None else None
    if error is not None and isinstance(status, int) and 400 <= status < 500 and error_names_the_item(error):
        yield Note(f"the compaction item was refused, {status} naming it (a limit: Codex cannot go on after "
                   f"compacting): {new_chain.body_excerpt(200)}")
        return
    failures = list(_answered(new_chain, "the compaction as the input of a new chain"))
    yield from failures
    if failures:
        return
    alone = _turn(observed, "alone")
    if not alone.succeeded:
        raise NotApplicable(f"the question alone was not answered ({alone.status_text}): nothing to measure the "
                            "history against")
    unread = history_unread(input_tokens(new_chain.response), input_tokens(alone.response), "the question alone",
                            "with the compaction item: an answer that forgot the history")
    if unread is not None:
        yield Failure(*unread, new_chain.body_excerpt(300))
