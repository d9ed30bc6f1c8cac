"""What the vscodelm checks read: the messages a case wrote (`Asked`, by the case's names), and the process's
transcript, in which every stdout message has one position."""

from __future__ import annotations

import json

from lmconform.apis.vscodelm import CHAT_RESPONSE, RESPONSE_COMPLETE, RESPONSE_PART
from lmconform.apis.vscodelm.normalize import Asked
from lmconform.cases import FIRST, StdioTurn
from lmconform.checks.observed import Observed
from lmconform.vocabulary import NotApplicable
from lmconform.wire.jsonlines import Message
from lmconform.wire.process import StdioProcess, exact_key
from lmconform.wire.stdio import StdioExchange

# What a check of the bridge reads: a case played over stdio, its exchanges and its turns the bridge's.
BridgeObserved = Observed[StdioExchange, StdioTurn]


def asked(observed: BridgeObserved) -> list[Asked]:
    """Every message the case wrote, request first, each with what the bridge said about it."""
    named = [(FIRST, observed.exchange), *((name, played.exchange) for name, played in observed.turns.items()
                                           if played.exchange is not None)]
    return [Asked(name, exchange) for name, exchange in named]


def process(observed: BridgeObserved) -> StdioProcess:
    running = observed.exchange.process if isinstance(observed.exchange, StdioExchange) else None
    if running is None:
        raise NotApplicable("the case was not played over stdio")
    return running


def sent_ids(observed: BridgeObserved) -> dict[str, object]:
    """The ids of the requests the case wrote, by exact key (7 and "7" apart)."""
    return {exact_key(item.request_id): item.request_id for item in asked(observed) if item.is_request}


def unsent(observed: BridgeObserved, value: object, field: str) -> tuple[str, str] | None:
    """(expected, actual) when `value`, read as an id, is not the id of a request the case wrote; else None."""
    sent = sent_ids(observed)
    if exact_key(value) in sent:
        return None
    shown = ", ".join(json.dumps(each) for each in sent.values()) or "none"
    return f"the id of a request sent ({shown})", f"{field} {json.dumps(value)}"


def position(observed: BridgeObserved) -> dict[int, int]:
    """Each stdout message's position in the order the bridge wrote them (by identity)."""
    return {id(message): index for index, message in enumerate(process(observed).stdout.messages)}


def cancel_time(observed: BridgeObserved, name: str) -> float | None:
    """When the case wrote the lm/cancel of the request `name`, if it did so before that request was answered: a
    cancel of an answered request cancels nothing."""
    for turn in observed.case.turns_of(StdioTurn):
        played = observed.turns.get(turn.name)
        if turn.cancels != name or played is None or played.exchange is None:
            continue
        sent = played.exchange.sent_at
        target = next((item for item in asked(observed) if item.name == name), None)
        response = target.response if target is not None else None
        if response is None or response.at > sent:
            return sent
    return None


def chat_requests(observed: BridgeObserved, cancelled: bool = False) -> list[Asked]:
    """The chat requests the case wrote; without those it cancelled, unless `cancelled`."""
    return [item for item in asked(observed) if item.is_request and item.method == CHAT_RESPONSE
            and (cancelled or cancel_time(observed, item.name) is None)]


def notifications(observed: BridgeObserved) -> list[Message]:
    """Every part and complete the bridge wrote, in order."""
    return [message for message in process(observed).stdout.messages if isinstance(message.value, dict)
            and message.value.get("method") in (RESPONSE_PART, RESPONSE_COMPLETE)]


def responses(observed: BridgeObserved) -> list[Message]:
    """Every JSON-RPC response the bridge wrote, in order."""
    return [message for message in process(observed).stdout.messages
            if isinstance(message.value, dict) and "method" not in message.value]
