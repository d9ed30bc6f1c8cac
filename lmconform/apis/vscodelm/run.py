"""How a case of the bridge protocol is played, and what a run finds out first.

A case is played over stdio: its messages written to one process of the bridge, in order, each request waited for
before the next message, except one that a later `lm/cancel` interrupts once it has streamed some parts. A chat
turn carries the whole history, as VS Code sends it: the earlier request's messages, its answer as the client kept
it (the text and tool-call parts it could show), or the user's edit of that answer, or a tool result for its call,
then the turn's own messages. Before any case, the bridge is asked for its models (`discover`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lmconform.api_table import STDIO, api_of
from lmconform.apis.vscodelm import CHAT_INFORMATION, CHAT_RESPONSE
from lmconform.apis.vscodelm.normalize import (
    CANCEL_BOUND_S,
    METHODS_WITH_MODEL,
    assistant_message,
    first_tool_call_id,
    text_message,
    tool_result_message,
)
from lmconform.cases import FIRST, Case, StdioTurn
from lmconform.checks.observed import Observed, PlayedTurn
from lmconform.run.run import TargetUnreachable
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.wire.stdio import NO_ID, StdioExchange, StdioTransport
from lmconform.wire.transport import open_transport

CANCEL_WATCH_S = 2 * CANCEL_BOUND_S  # how long a cancelled request is watched for its late answer, or more parts


class _NotSendable(Exception):
    """A turn continues an answer that has nothing to continue from."""


def play(case: Case, target: Target, settings: RunSettings) -> Observed[StdioExchange, StdioTurn]:
    """The case's messages to one process of the bridge; the run's settings fill nothing in here: a bridge's
    output cap and temperature are its own command line's."""
    transport = open_transport(target, STDIO)
    assert isinstance(transport, StdioTransport)
    played: dict[str, StdioExchange] = {}
    turns: dict[str, PlayedTurn[StdioTurn, StdioExchange]] = {}
    steps: list[tuple[str, StdioTurn | None]] = [(FIRST, None), *((turn.name, turn) for turn in case.turns_of(StdioTurn))]
    try:
        for position, (name, turn) in enumerate(steps):
            following = steps[position + 1][1] if position + 1 < len(steps) else None
            if turn is not None and turn.after_parts and turn.cancels in played:
                transport.await_parts(played[turn.cancels], turn.after_parts)
            try:
                exchange = _write(transport, case, turn, played, target)
            except _NotSendable as reason:
                assert turn is not None, "only a turn can be unsendable: the case's request is always written"
                turns[name] = PlayedTurn(turn, None, str(reason))
                continue
            played[name] = exchange
            if turn is not None:
                turns[name] = PlayedTurn(turn, exchange)
            if exchange.request.is_request:
                interrupted = following is not None and following.after_parts and following.cancels == name
                if not interrupted:
                    transport.await_answer(exchange)
            elif turn is not None and turn.cancels in played:
                transport.await_answer(played[turn.cancels], at_most=CANCEL_WATCH_S)
    finally:
        transport.close()
    return Observed(case, target, played[FIRST], turns)


def _write(transport: StdioTransport, case: Case, turn: StdioTurn | None, played: dict[str, StdioExchange],
           target: Target) -> StdioExchange:
    if turn is None:
        if case.raw_body is not None:
            return transport.write(None, raw=case.raw_body)
        params = _with_model(case.method, case.body, target)
        request_id = NO_ID if case.notification else case.request_id if case.request_id is not None \
            else transport.next_id()
        return transport.write(case.method, params, request_id)
    if turn.raw_body is not None:
        return transport.write(None, raw=turn.raw_body)
    method = turn.method or api_of(case.api).method
    if turn.cancels is not None:
        cancelled = played.get(turn.cancels)
        if cancelled is None or not cancelled.request.is_request:
            raise _NotSendable(f"the message it cancels ({turn.cancels}) was not sent as a request")
        params = {**turn.body, "requestId": cancelled.request_id}
    elif method == CHAT_RESPONSE and case.method == CHAT_RESPONSE and isinstance(case.body, dict):
        params = {**case.body, **{key: value for key, value in turn.body.items() if key != "messages"},
                  "messages": _history(turn, played)}
    else:
        params = dict(turn.body)
    params = _with_model(method, params, target)
    request_id = NO_ID if turn.notification else turn.id if turn.id is not None else transport.next_id()
    return transport.write(method, params, request_id)


def _with_model(method: str, params: Any, target: Target) -> Any:
    """The bridge's model, for the methods that name one, where the case leaves it out."""
    if method in METHODS_WITH_MODEL and isinstance(params, dict) and "modelId" not in params:
        return {"modelId": target.bridge_model or target.model or "default", **params}
    return params


def _history(turn: StdioTurn, played: dict[str, StdioExchange]) -> list:
    own = list(turn.body.get("messages") or [])
    base = turn.answers_call_of or turn.previous
    if base is None:
        return own
    exchange = played.get(base)
    if exchange is None:
        raise _NotSendable(f"the turn it continues ({base}) was not sent")
    if not exchange.succeeded:
        raise _NotSendable(f"the answer it continues ({base}) was {exchange.status_text}")
    sent = exchange.request.body
    if not isinstance(sent, dict) or not isinstance(sent.get("messages"), list):
        raise _NotSendable(f"the turn it continues ({base}) sent no history")
    history = list(sent["messages"])
    answer = assistant_message(exchange)
    if turn.answers_call_of:
        call_id = first_tool_call_id(exchange)
        if call_id is None:
            raise _NotSendable(f"the answer it continues ({base}) has no tool call to answer")
        return [*history, answer, tool_result_message(call_id, turn.call_output), *own]
    if turn.edited_answer is not None:
        answer = text_message("assistant", turn.edited_answer)
    return [*history, *([answer] if answer else []), *own]


def discover(target: Target) -> Target:
    """Start the bridge once and ask for its models; the first one's id is the `modelId` cases send. A bridge that
    cannot be started at all is unreachable; one that answers badly is left for the cases to judge."""
    if target.bridge_model:
        return target
    transport = StdioTransport(target)
    try:
        exchange = transport.send(CHAT_INFORMATION, None, {"silent": True})
    finally:
        transport.close()
    if exchange.error_kind == "unreachable":
        raise TargetUnreachable(exchange.error)
    result = exchange.response.value.get("result") if exchange.response is not None else None
    models = result.get("models") if isinstance(result, dict) else None
    first = models[0] if isinstance(models, list) and models and isinstance(models[0], dict) else {}
    return replace(target, bridge_model=first["id"]) if isinstance(first.get("id"), str) and first["id"] else target
