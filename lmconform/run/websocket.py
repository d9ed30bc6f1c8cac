"""How a case of the Responses API's WebSocket mode is played (Case.websocket): its request and each of its turns
are `response.create` messages on the socket the case opened on its path, in order, each answer read to its end
before the next is sent; a turn with `reconnect` opens a new socket first. A turn chained to an earlier one
(`previous`) carries that answer's response id as `previous_response_id`."""

from __future__ import annotations

from lmconform.api_table import api_of
from lmconform.cases import FIRST, Case, HttpTurn
from lmconform.checks.observed import Observed, PlayedTurn
from lmconform.normalize.reading import reading
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.wire.websocket import WebSocketExchange, WebSocketSession

CREATE = "response.create"


def play(case: Case, target: Target, settings: RunSettings) -> Observed[WebSocketExchange, HttpTurn]:
    body = case.body_for(target.model, settings.max_tokens, settings.temperature)
    continuation = reading(case.api).continuation
    session = WebSocketSession(target, case.path or api_of(case.api).path)
    try:
        first = session.send({"type": CREATE, **body})
        answers: dict[str, WebSocketExchange] = {FIRST: first}
        turns: dict[str, PlayedTurn[HttpTurn, WebSocketExchange]] = {}
        for turn in case.turns_of(HttpTurn):
            previous_id = None
            if turn.previous:
                answered = answers.get(turn.previous)
                previous_id = answered.response.get("id") if answered is not None else None
                if not isinstance(previous_id, str):
                    turns[turn.name] = PlayedTurn(turn, None, f"the answer it continues ({turn.previous}) has no "
                                                              "response id to chain from")
                    continue
            if continuation is None:
                raise ValueError(f"the {case.api} API builds no further turns to send over its WebSocket mode")
            message = continuation(body, turn.body, previous_id, None)
            answers[turn.name] = session.send({"type": CREATE, **message}, reconnect=turn.reconnect)
            turns[turn.name] = PlayedTurn(turn, answers[turn.name])
    finally:
        session.close()
    return Observed(case, target, first, turns)
