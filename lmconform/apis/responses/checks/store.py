"""What a server keeps of a response, and for how long: `GET /v1/responses/{id}` returns it as it finished, `DELETE`
removes it, `/input_items` lists its input, and a response created with `store: false` or deleted is found no more.

Every verdict here reads status codes and stored objects, never the model's words: the same holds for a real model
as for the reference server. A server without one of these routes is UNSUPPORTED for its check (not FAILED); the
chain to a forgotten response is judged with the unknown ids (lmconform.apis.responses.checks.chain).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.responses.checks.chain import forgotten_by
from lmconform.apis.responses.checks.scope import (
    responses_deletes,
    responses_forgets,
    responses_input_items,
    responses_reads,
)
from lmconform.apis.responses.normalize import response_object
from lmconform.cases import FIRST, HttpTurn
from lmconform.checks.observed import Observed, PlayedTurn
from lmconform.checks.refs import OPENAI_RESPONSES_DELETE, OPENAI_RESPONSES_GET, OPENAI_RESPONSES_INPUT_ITEMS
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Unsupported, shown
from lmconform.wire.http import MISSING_ROUTE_STATUSES, HttpExchange


def _sent(observed: Observed, method: str, items: bool = False) -> list[tuple[PlayedTurn, str, HttpExchange]]:
    """The turns of `method` to a stored response (its `/input_items` with `items`) that were sent, each with the
    turn whose answer it names and what came back."""
    found = []
    for played in observed.turns.values():
        turn = played.turn
        if turn.method == method and turn.path and turn.path.endswith("/input_items") == items \
                and played.exchange is not None and turn.named:
            found.append((played, turn.named[0], played.exchange))
    return found


def _kept(observed: Observed, method: str, items: bool = False) -> list[tuple[PlayedTurn, str, HttpExchange]]:
    """Those that name a response the server must still know."""
    found = [sent for sent in _sent(observed, method, items) if sent[1] not in forgotten_by(observed, sent[0].turn)]
    if not found:
        raise NotApplicable(f"no {method} of a response the server keeps")
    return found


def _route_present(exchange: HttpExchange, what: str) -> None:
    if exchange.status in MISSING_ROUTE_STATUSES:
        raise Unsupported(f"{what} of a response the target just created is answered HTTP {exchange.status}: it "
                          "keeps no responses to read back, or has no such route")


def _texts(response: dict) -> list[str]:
    return [part.get("text", "") for item in response.get("output") or [] if isinstance(item, dict)
            for part in item.get("content") or [] if isinstance(part, dict) and "text" in part]


def _reproduce(exchange: HttpExchange) -> str:
    return f"{exchange.body_excerpt(300)}\nReproduce: {exchange.request.reproduction()}"


@check("responses.store.get_returns_stored", level=Level.MUST, applies=responses_reads, ref=OPENAI_RESPONSES_GET,
       title="GET /v1/responses/{id} returns the response as it finished: its id, status and output",
       proven_by=("stream-stored-as-created",))
def get_returns_stored(observed: Observed) -> Iterator[Failure]:
    # MUST: a client that reads a streamed response back (a reconnect, a background job) gets what the stream ended
    # with; a snapshot from the stream's start has no output.
    for _, name, exchange in _kept(observed, "GET"):
        _route_present(exchange, "GET")
        created = response_object(observed.answer_to(name))
        got = exchange.json if isinstance(exchange.json, dict) else {}
        if not exchange.succeeded:
            yield Failure(f"HTTP 200 with the response {shown(created.get('id'))}", f"HTTP {exchange.status}",
                          _reproduce(exchange))
            continue
        expected = (created.get("id"), created.get("status"), _texts(created))
        actual = (got.get("id"), got.get("status"), _texts(got))
        if actual != expected:
            yield Failure(f"id {shown(expected[0])}, status {shown(expected[1])}, output {expected[2]!r:.200}",
                          f"id {shown(actual[0])}, status {shown(actual[1])}, output {actual[2]!r:.200}",
                          _reproduce(exchange))


def _reads_back(observed: Observed) -> None:
    """A 404 for a forgotten response shows the server forgot it only where the same case read a kept one back: on
    a server with no such route every GET is a 404."""
    kept = [exchange for played, name, exchange in _sent(observed, "GET")
            if name not in forgotten_by(observed, played.turn)]
    if any(exchange.succeeded for exchange in kept):
        return
    missing = next((exchange for exchange in kept if exchange.status in MISSING_ROUTE_STATUSES), None)
    if missing is not None:
        raise Unsupported(f"GET of a response the target kept is answered HTTP {missing.status}: it reads no "
                          "responses back, so its 404 for a forgotten one shows nothing")
    raise NotApplicable("no response the target kept was read back, so a 404 for a forgotten one shows nothing")


@check("responses.store.forgotten_not_found", level=Level.MUST, applies=responses_forgets, ref=OPENAI_RESPONSES_GET,
       title="a response created with `store: false`, or deleted, is not found: GET answers 404, never 200 or 5xx",
       proven_by=("store-false-ignored", "delete-keeps-response"))
def forgotten_not_found(observed: Observed) -> Iterator[Failure]:
    # MUST: `store: false` is a promise about the user's data, and DELETE is how a user takes it back; a 5xx makes
    # the SDKs retry a request that can never succeed.
    _reads_back(observed)
    judged = False
    for played, name, exchange in [*_sent(observed, "GET"), *_sent(observed, "GET", items=True)]:
        why = forgotten_by(observed, played.turn).get(name)
        if why is None:
            continue
        judged = True
        if not 400 <= (exchange.status or 0) < 500:
            kept = "it was kept" if exchange.succeeded else "a server error"
            yield Failure(f"HTTP 404: the response {'of the request' if name == FIRST else f'of {name!r}'} was {why}",
                          f"HTTP {exchange.status}: {kept}", _reproduce(exchange))
    if not judged:
        raise NotApplicable("no GET of a forgotten response was sent")


@check("responses.store.delete_confirmed", level=Level.MUST, applies=responses_deletes, ref=OPENAI_RESPONSES_DELETE,
       title="DELETE /v1/responses/{id} answers 200 with the deletion object: its id, `object: \"response\"`, "
             "`deleted: true`", proven_by=("deletion-bare",))
def delete_confirmed(observed: Observed) -> Iterator[Failure]:
    for _, name, exchange in _kept(observed, "DELETE"):
        _route_present(exchange, "DELETE")
        expected = {"id": response_object(observed.answer_to(name)).get("id"), "object": "response", "deleted": True}
        got = exchange.json if isinstance(exchange.json, dict) else None
        if not exchange.succeeded or got is None or {key: got.get(key) for key in expected} != expected:
            yield Failure(f"HTTP 200 with {json.dumps(expected)}", f"HTTP {exchange.status} with "
                          f"{json.dumps(got)[:200] if got is not None else 'no JSON object'}", _reproduce(exchange))


def _input_of(observed: Observed, name: str) -> str | None:
    """The input text the request or turn `name` sent, when it was one string (a turn sends its own input only)."""
    body = observed.case.body if isinstance(observed.case.body, dict) else {}
    turn: HttpTurn | None = next((played.turn for played in observed.turns.values() if played.turn.name == name), None)
    given = (turn.body if turn is not None else body).get("input")
    return given if isinstance(given, str) else None


def _item_texts(item: object) -> list[str]:
    content = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, str):
        return [content]
    texts = [part.get("text") for part in content or [] if isinstance(part, dict)]
    return [text for text in texts if isinstance(text, str)]


@check("responses.store.input_items_listed", level=Level.MUST, applies=responses_input_items,
       ref=OPENAI_RESPONSES_INPUT_ITEMS,
       title="GET /v1/responses/{id}/input_items answers a list object holding the response's input",
       proven_by=("input-items-empty",))
def input_items_listed(observed: Observed) -> Iterator[Failure]:
    # The recall token of the request is the proof: it is in the input the server kept, whatever the model said.
    for _, name, exchange in _kept(observed, "GET", items=True):
        _route_present(exchange, "GET …/input_items")
        listed = exchange.json if isinstance(exchange.json, dict) else {}
        data = listed.get("data")
        if not exchange.succeeded or listed.get("object") != "list" or not isinstance(data, list):
            yield Failure('HTTP 200 with {"object": "list", "data": [...]}', f"HTTP {exchange.status} with "
                          f"{json.dumps(listed)[:200]}", _reproduce(exchange))
            continue
        sent = _input_of(observed, name)
        if sent is not None and not any(sent in text for item in data for text in _item_texts(item)):
            yield Failure(f"an input item with the text {sent!r}", f"{len(data)} items, none with it",
                          _reproduce(exchange))
