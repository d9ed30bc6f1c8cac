"""Playing a case: its request, then each of its turns, built from the request's body and the answers before it,
all on one transport opened for the case; with an upstream, the same request sent there too. Whatever checks are
selected, a case is played the same way: checks only read what was sent here."""

from __future__ import annotations

from lmconform.api_table import api_of
from lmconform.cases import FIRST, Case, HttpTurn
from lmconform.cases.model import PLACEHOLDER
from lmconform.checks.observed import AnyObserved, Observed, PlayedTurn, generation_of
from lmconform.normalize.reading import reading
from lmconform.run import websocket
from lmconform.run.overflow import sized, stated_context
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import NotApplicable
from lmconform.wire.http import HttpExchange, HttpTransport
from lmconform.wire.transport import open_http_transport


class _NotSendable(Exception):
    """A turn refers to an answer that has nothing to continue from."""


def request_body(case: Case, target: Target, settings: RunSettings):
    """The case's body as sent to `target`: the target's model, and the run's output cap and temperature, where the
    case has none; a prompt that is to overflow the context sized over the context `target` states."""
    body = case.body_for(target.model, settings.max_tokens, settings.temperature)
    return sized(body, stated_context(target).prompt_words) if case.overflows_context else body


def play(case: Case, target: Target, upstream: Target | None = None,
         settings: RunSettings = RunSettings()) -> AnyObserved:
    """The case played by its API's player: over HTTP (below) unless the API brings its own (a conversation with a
    process over stdio, lmconform.apis.vscodelm.run) or the case is one of the Responses API's WebSocket mode
    (lmconform.run.websocket); neither has an upstream to compare with."""
    if case.websocket is not None:
        return websocket.play(case, target, settings)
    player = api_of(case.api).room("run")
    if player is not None:
        return player.play(case, target, settings)
    transport = open_http_transport(target)
    try:
        body = request_body(case, target, settings)
        exchange = transport.send(case.method, case.path, body, case.raw_body, dict(case.headers))
        answers: dict[str, HttpExchange] = {FIRST: exchange}
        turns: dict[str, PlayedTurn[HttpTurn, HttpExchange]] = {}
        for turn in case.turns_of(HttpTurn):
            method = turn.method or case.method
            try:
                path = _turn_path(case, turn, answers)
                turn_body = _turn_body(case, body, turn, answers) if method == "POST" else None
            except _NotSendable as reason:
                turns[turn.name] = PlayedTurn(turn, None, str(reason))
                continue
            answers[turn.name] = transport.send(method, path, turn_body)
            turns[turn.name] = PlayedTurn(turn, answers[turn.name])
        paired = _pair(case, body, exchange, transport) if case.pair else {}
    finally:
        transport.close()
    sent_upstream = None
    if upstream is not None:
        upstream_transport = open_http_transport(upstream)
        try:
            sent_upstream = upstream_transport.send(case.method, case.path, request_body(case, upstream, settings),
                                                    case.raw_body, dict(case.headers))
        finally:
            upstream_transport.close()
    return Observed(case, target, exchange, turns, upstream_exchange=sent_upstream, upstream_target=upstream,
                    paired=paired)


def _pair(case: Case, body: dict, first: HttpExchange, transport: HttpTransport) -> dict[str, HttpExchange]:
    """The request in its other form, and, where the API's server keeps its answers and was not asked to forget
    this one (`store: false`), the unstreamed answer fetched by its id."""
    other = transport.send(case.method, case.path, case.paired_body(body), headers=dict(case.headers))
    paired = {"body" if case.streamed else "streamed": other}
    unstreamed = other if case.streamed else first
    stored_path, answer_id = api_of(case.api).stored_path, reading(case.api).answer_id
    kept = answer_id(unstreamed) if stored_path and answer_id and unstreamed.succeeded else None
    if kept is not None and stored_path and body.get("store") is not False:
        paired["stored"] = transport.send("GET", stored_path.format(response_id=kept), None)
    return paired


def _turn_body(case: Case, request: dict, turn: HttpTurn, answers: dict[str, HttpExchange]) -> dict:
    continuation = reading(case.api).continuation
    if continuation is None:
        raise _NotSendable(f"the {case.api} API builds no further turns")
    previous_id = _answer_id(case, turn.previous, answers) if turn.previous else None
    call = answered = None
    if turn.answers_call_of:
        assert turn.call_output is not None  # the case schema requires it beside answers_call_of
        answered = _answered(turn.answers_call_of, answers)
        call = (_first_call_id(case, turn.answers_call_of, answers), turn.call_output)
    body = continuation(request, turn.body, previous_id, call, answered)
    if turn.compaction_of:
        body["input"] = [*_output_items(_answered(turn.compaction_of, answers)), *body.get("input", [])]
    return body


def _output_items(exchange: HttpExchange) -> list:
    """The output items of an answer (a compaction's, which a client sends back as they are)."""
    items = websocket.output_items(exchange)
    if not items:
        raise _NotSendable(f"the answer it sends back has no output items: {exchange.body_excerpt(200)}")
    return items


def _turn_path(case: Case, turn: HttpTurn, answers: dict[str, HttpExchange]) -> str:
    """The turn's path with the id of each answer it names, or the case's path."""
    if turn.path is None:
        return case.path
    return PLACEHOLDER.sub(lambda named: _answer_id(case, named[1], answers), turn.path)


def _answered(name: str, answers: dict[str, HttpExchange]) -> HttpExchange:
    exchange = answers.get(name)
    if exchange is None:
        raise _NotSendable(f"the turn {name!r} it continues was not sent")
    if exchange.error or not exchange.status or not 200 <= exchange.status < 300:
        raise _NotSendable(f"the answer it continues ({name}) was HTTP {exchange.status} {exchange.error or ''}".strip())
    return exchange


def _answer_id(case: Case, name: str, answers: dict[str, HttpExchange]) -> str:
    read_id = reading(case.api).answer_id
    if read_id is None:
        raise _NotSendable(f"the {case.api} API's answers have no id to chain from")
    answer_id = read_id(_answered(name, answers))
    if answer_id is None:
        raise _NotSendable(f"the answer it continues ({name}) has no id to chain from")
    return answer_id


def _first_call_id(case: Case, name: str, answers: dict[str, HttpExchange]) -> str:
    try:
        calls = generation_of(case.api, _answered(name, answers)).tool_calls()
    except NotApplicable as reason:
        raise _NotSendable(str(reason)) from None
    call_id = calls[0].started.id if calls else None
    if not isinstance(call_id, str) or not call_id:
        raise _NotSendable(f"the answer it continues ({name}) has no function call with a call_id to answer")
    return call_id
