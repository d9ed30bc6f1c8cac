"""How a case of the Responses API's WebSocket mode is played (Case.websocket): its request and each of its turns
are `response.create` messages on the socket the case opened on its path, in order, each answer read to its end
before the next is sent; a turn with `reconnect` opens a new socket first. A turn chained to an earlier one
(`previous`) carries that answer's response id as `previous_response_id`. A turn with a `path` of its own is an HTTP
request beside the socket (`POST /v1/responses/compact`, which has no socket), and a turn with `compaction_of` opens
its input with the output items of that turn's answer: a compaction sent back as the input of a new chain."""

from __future__ import annotations

from lmconform.api_table import api_of
from lmconform.cases import FIRST, Case, HttpTurn
from lmconform.checks.observed import Observed, PlayedTurn
from lmconform.normalize.reading import reading
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.wire.exchange import Exchange
from lmconform.wire.transport import open_transport
from lmconform.wire.websocket import WebSocketExchange, WebSocketSession

CREATE = "response.create"


def output_items(exchange: Exchange) -> list:
    """The output items of an HTTP answer (a compaction's, which a client sends back as they are); [] when none."""
    answer = getattr(exchange, "json", None)
    items = answer.get("output") if isinstance(answer, dict) else None
    return items if isinstance(items, list) else []


# A turn with a path of its own is answered over HTTP, beside the socket: the case's exchanges are of either kind.
def play(case: Case, target: Target, settings: RunSettings) -> Observed[Exchange, HttpTurn]:
    body = case.body_for(target.model, settings.max_tokens, settings.temperature)
    continuation = reading(case.api).continuation
    session = WebSocketSession(target, case.path or api_of(case.api).path)
    http_turns = case.turns_of(HttpTurn)
    transport = open_transport(target) if any(turn.path for turn in http_turns) else None
    try:
        first = session.send({"type": CREATE, **body})
        answers: dict[str, Exchange] = {FIRST: first}
        turns: dict[str, PlayedTurn[HttpTurn, Exchange]] = {}
        for turn in http_turns:
            previous_id = None
            if turn.previous:
                answered = answers.get(turn.previous)
                previous_id = answered.response.get("id") if isinstance(answered, WebSocketExchange) else None
                if not isinstance(previous_id, str):
                    turns[turn.name] = PlayedTurn(turn, None, f"the answer it continues ({turn.previous}) has no "
                                                              "response id to chain from")
                    continue
            if continuation is None:
                raise ValueError(f"the {case.api} API builds no further turns to send over its WebSocket mode")
            message = continuation(body, turn.body, previous_id, None)
            if turn.compaction_of:
                compaction = answers.get(turn.compaction_of)
                items = output_items(compaction) if compaction is not None and compaction.succeeded else []
                if not items:
                    turns[turn.name] = PlayedTurn(turn, None, f"the answer it sends back ({turn.compaction_of}) has "
                                                              "no output items")
                    continue
                message["input"] = [*items, *message.get("input", [])]
            if turn.path and transport is not None:
                answers[turn.name] = transport.send("POST", turn.path, message)
            else:
                answers[turn.name] = session.send({"type": CREATE, **message}, reconnect=turn.reconnect)
            turns[turn.name] = PlayedTurn(turn, answers[turn.name])
    finally:
        session.close()
        if transport is not None:
            transport.close()
    return Observed(case, target, first, turns)
