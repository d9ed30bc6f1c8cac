"""`/v1/responses` conversations kept by the server: each invariant of `previous_response_id`, stated once over a
case's turns, whether the turns were written by hand (a chain probe, a tool result) or generated (lmconform.fuzz).

A turn the server refused is the finding of the check that needed its answer; a turn that could not be sent (what it
continues had no id, no call) leaves that check nothing to judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.apis.responses.checks.scope import (
    forgotten,
    responses_chain,
    responses_function_call_output,
    responses_recall,
    responses_replay,
    responses_unknown_previous,
)
from lmconform.apis.responses.normalize import response_object
from lmconform.cases import HttpTurn
from lmconform.checks.observed import Observed, PlayedTurn
from lmconform.checks.refs import LMSTUDIO_CHAIN_NOT_FOUND, LMSTUDIO_RESPONSES, OPENAI_RESPONSES_CREATE
from lmconform.checks.registry import check
from lmconform.normalize.errors import error_object
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, Requirement, Unsupported, shown
from lmconform.wire.http import HttpExchange


class _Refused(Exception):
    """A turn whose answer a check needs was not answered 2xx: that is the check's finding."""

    def __init__(self, name: str, exchange: HttpExchange) -> None:
        self.failure = Failure(f"the {name} turn answered 2xx",
                               f"HTTP {exchange.status} {exchange.error or ''}".strip(),
                               f"{exchange.body_excerpt(300)}\nReproduce: {exchange.request.reproduction()}")


def _exchange(played: PlayedTurn) -> HttpExchange:
    """The turn's exchange; a turn that could not be sent leaves nothing to judge."""
    if played.exchange is None:
        raise NotApplicable(f"the turn {played.turn.name!r} was not sent: {played.skipped}")
    return played.exchange


def _sent(observed: Observed, played: PlayedTurn) -> PlayedTurn:
    """The turn if it was sent (_exchange)."""
    _exchange(played)
    return played


def _answer(played: PlayedTurn) -> dict:
    """The response object of a turn that was answered 2xx."""
    exchange = _exchange(played)
    if exchange.error or not exchange.status or not 200 <= exchange.status < 300:
        raise _Refused(played.turn.name, exchange)
    return response_object(exchange)


def _judged(function):
    """Run a chain check over the turns it finds; a refused turn is its failure, and a check that found no turn it
    could judge has nothing to say."""

    def checked(observed: Observed) -> Iterator[Failure]:
        observed.require_success()
        judged = False
        for played in function.turns(observed):
            try:
                yield from function(observed, _sent(observed, played))
            except NotApplicable:
                continue
            except _Refused as refused:
                yield refused.failure
            judged = True
        if not judged:
            raise NotApplicable("no turn of this case could be judged for it")

    checked.__name__, checked.__doc__ = function.__name__, function.__doc__
    return checked


def _over(select):
    """Attach the turns a check judges (a function of the observation) to the check function."""

    def attach(function):
        function.turns = select
        return _judged(function)

    return attach


def _chained(observed: Observed) -> list[PlayedTurn]:
    """Turns that continue an earlier answer with new input (not the ones that answer a function call, nor those
    that continue an answer the server must have forgotten)."""
    return [played for played in observed.turns.values() if played.turn.previous and not played.turn.answers_call_of
            and played.turn.previous not in forgotten_by(observed, played.turn)]


def forgotten_by(observed: Observed, turn: HttpTurn) -> dict[str, str]:
    """The answers the server must no longer know when `turn` is sent: created with `store: false`, or deleted by a
    DELETE it answered 2xx."""
    def deleted(delete) -> bool:
        exchange = observed.turns[delete.name].exchange
        return exchange is not None and exchange.succeeded

    return forgotten(observed.case, turn, deleted)


def _previous_id(observed: Observed, turn: HttpTurn) -> Any:
    """The id the answer a chained turn continues gave itself: what the turn's answer must echo."""
    assert turn.previous is not None, "only a chained turn (_chained) continues an answer"
    return response_object(observed.answer_to(turn.previous)).get("id")


def input_tokens(response: dict) -> int | None:
    usage = response.get("usage")
    tokens = usage.get("input_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) else None


def history_unread(with_history: int | None, without: int | None, control: str, sent: str) -> tuple[str, str] | None:
    """(Expected, Actual) when an answer sent with its history cost no more input tokens than `control`, the same
    question without it: the history was not read, whatever the model then said. None when it was; Unsupported
    where the target counts no input tokens."""
    if with_history is None or without is None:
        raise Unsupported("the target reports no usage.input_tokens, so the history cannot be measured")
    if with_history > without:
        return None
    return f"more than {without} input tokens ({control})", f"{with_history} input tokens {sent}"


@check("responses.chain.previous_id_echoed", level=Level.MUST, applies=responses_chain, ref=OPENAI_RESPONSES_CREATE,
       title="a chained response echoes the `previous_response_id` it was given", proven_by=("previous-id-echo-wrong",))
@_over(_chained)
def previous_id_echoed(observed: Observed, played: PlayedTurn) -> Iterator[Failure]:
    parent, chained = _previous_id(observed, played.turn), _answer(played)
    if chained.get("previous_response_id") != parent:
        yield Failure(f"previous_response_id {shown(parent)}",
                      f"previous_response_id {shown(chained.get('previous_response_id'))}",
                      json.dumps({k: chained.get(k) for k in ("id", "previous_response_id")}))


def _with_control(observed: Observed) -> list[PlayedTurn]:
    """Chained turns whose input is also sent alone (the control)."""
    alone = {json.dumps(played.turn.body, sort_keys=True) for played in observed.turns.values()
             if not played.turn.previous and not played.turn.answers_call_of}
    return [played for played in _chained(observed) if json.dumps(played.turn.body, sort_keys=True) in alone]


def _control_of(observed: Observed, played: PlayedTurn) -> PlayedTurn:
    body = json.dumps(played.turn.body, sort_keys=True)
    return next(other for other in observed.turns.values() if not other.turn.previous
                and not other.turn.answers_call_of and json.dumps(other.turn.body, sort_keys=True) == body)


@check("responses.chain.history_used", level=Level.MUST, applies=responses_chain, ref=LMSTUDIO_RESPONSES,
       title="a chained turn is answered with the earlier turns in context (more input tokens than alone)",
       proven_by=("chain-ignored",))
@_over(_with_control)
def history_used(observed: Observed, played: PlayedTurn) -> Iterator[Failure]:
    # Proof without trusting the model: the same input costs more input tokens when the history is prepended.
    chained = _answer(played)
    alone = _answer(_sent(observed, _control_of(observed, played)))
    unread = history_unread(input_tokens(chained), input_tokens(alone), "the same input sent alone",
                            "with previous_response_id: the history was dropped")
    if unread is not None:
        yield Failure(*unread, f"Reproduce: {_exchange(played).request.reproduction()}")


def _recalling(observed: Observed) -> list[PlayedTurn]:
    return [played for played in observed.turns.values() if played.turn.recall]


@check("responses.chain.recall_answered", level=Level.MUST, applies=responses_recall, ref=LMSTUDIO_RESPONSES,
       requires=[Requirement.REFERENCE_PROFILE],
       title="the reference model answers a recall question from the chained history", proven_by=("chain-ignored",))
@_over(_recalling)
def recall_answered(observed: Observed, played: PlayedTurn) -> Iterator[Failure]:
    # Only the deterministic reference model can be held to an answer; real models are judged by history_used.
    chained = _answer(played)
    text = " ".join(part.get("text", "") for item in chained.get("output") or [] if isinstance(item, dict)
                    for part in item.get("content") or [] if isinstance(part, dict))
    recall = played.turn.recall
    assert recall is not None, "_recalling gives only the turns that ask a recall question"
    if recall not in text:
        yield Failure(f"an answer containing {recall!r}", repr(text[:200]),
                      f"Reproduce: {_exchange(played).request.reproduction()}")


def _second_children(observed: Observed) -> list[PlayedTurn]:
    """Turns that repeat an earlier child of the same parent with the same input: a fork."""
    seen, repeats = set(), []
    for played in _chained(observed):
        key = (played.turn.previous, json.dumps(played.turn.body, sort_keys=True))
        if key in seen:
            repeats.append(played)
        seen.add(key)
    return repeats


@check("responses.chain.fork_independent", level=Level.MUST, applies=responses_chain, ref=OPENAI_RESPONSES_CREATE,
       title="two children of one response do not see each other (a fork, not a shared thread)",
       proven_by=("fork-shares-state",))
@_over(_second_children)
def fork_independent(observed: Observed, played: PlayedTurn) -> Iterator[Failure]:
    turns = list(observed.turns.values())
    key = (played.turn.previous, played.turn.body)
    first = next(other for other in turns if (other.turn.previous, other.turn.body) == key)
    # Every child of the same parent between the two: refused ones are findings too, as in a thread they would leak.
    for between in turns[turns.index(first):turns.index(played)]:
        if between.turn.previous == played.turn.previous:
            _answer(_sent(observed, between))
    before, after = input_tokens(_answer(first)), input_tokens(_answer(played))
    if before is None or after is None:
        raise Unsupported("the target reports no usage.input_tokens, so a fork cannot be measured")
    if after != before:
        yield Failure(f"{before} input tokens, as for the same child before its sibling existed",
                      f"{after} input tokens: a sibling's turn leaked into this child",
                      f"Reproduce: {_exchange(played).request.reproduction()}")


def _call_answers(observed: Observed) -> list[PlayedTurn]:
    return [played for played in observed.turns.values() if played.turn.answers_call_of]


@check("responses.chain.function_call_output_round_trip", level=Level.MUST, applies=responses_function_call_output,
       ref=OPENAI_RESPONSES_CREATE, title="a function_call_output answering the call's call_id continues the chain",
       proven_by=("function-call-output-rejected",))
@_over(_call_answers)
def function_call_output_round_trip(observed: Observed, played: PlayedTurn) -> Iterator[Failure]:
    answer = _answer(played)
    if answer.get("status") not in (None, "completed") or not answer.get("output"):
        yield Failure("a completed response with output", f"status {shown(answer.get('status'))}, "
                      f"{len(answer.get('output') or [])} output items", json.dumps(answer)[:400])


_NEVER_ISSUED = "the history was silently dropped"


def _unknown_ids(observed: Observed) -> list[tuple[str, HttpExchange]]:
    """The answers to a previous_response_id that was never issued (the case's request, or turns that send one), or
    that the server must have forgotten (stored with `store: false`, or deleted), each with what a 2xx answer to it
    means."""
    # An id of another JSON type is a malformed request, refused as any other, not an id to look up.
    named = observed.case.previous_response_id
    answers = [(_NEVER_ISSUED, observed.exchange)] if observed.case.invalid and named and isinstance(named, str) else []
    for played in observed.turns.values():
        why = forgotten_by(observed, played.turn).get(played.turn.previous or "")
        if played.exchange is not None and (played.turn.unknown_previous_id or why):
            meaning = f"it continued from a response {why}" if why else _NEVER_ISSUED
            answers.append((meaning, observed.answer_to(played.turn.name)))
    if not answers:
        raise NotApplicable("no request of this case names an unknown previous_response_id")
    return answers


@check("responses.chain.unknown_id_not_accepted", level=Level.MUST, applies=responses_unknown_previous,
       ref=LMSTUDIO_CHAIN_NOT_FOUND,
       title="an unknown or forgotten previous_response_id is refused, never answered as if it were known",
       proven_by=("unknown-previous-200",))
def unknown_id_not_accepted(observed: Observed) -> Iterator[Failure]:
    # The refusal is this check's property; what its body says is errors.body.*'s and
    # responses.chain.unknown_id_is_400_not_found's.
    for meaning, exchange in _unknown_ids(observed):
        succeeded = exchange.status is not None and 200 <= exchange.status < 300
        if not 400 <= (exchange.status or 0) < 500:
            yield Failure("a 4xx error", f"HTTP {exchange.status}: {meaning}" if succeeded else f"HTTP {exchange.status}",
                          exchange.body_excerpt())


@check("responses.chain.unknown_id_is_400_not_found", level=Level.SHOULD, applies=responses_unknown_previous,
       ref=LMSTUDIO_CHAIN_NOT_FOUND, title="an unknown previous_response_id gets 400 `previous_response_not_found`",
       proven_by=("unknown-previous-404",))
def unknown_id_is_400_not_found(observed: Observed) -> Iterator[Failure]:
    # SHOULD: OpenAI answers 400 with this code; 404 is a defensible reading that clients may not expect.
    for _, exchange in _unknown_ids(observed):
        code = error_object(exchange).get("code")
        if exchange.status != 400 or code != "previous_response_not_found":
            yield Failure("HTTP 400, code 'previous_response_not_found'", f"HTTP {exchange.status}, code {shown(code)}",
                          exchange.body_excerpt())


# --- stateless replay: the transcript the client keeps, sent whole with store: false -----------------------------

def names_the_item(exchange: HttpExchange) -> bool:
    """A refusal that says what it could not take (error_names_the_item) in its body's error object."""
    return error_names_the_item(error_object(exchange))


def error_names_the_item(error: dict) -> bool:
    """An error object that says what it could not take: `param` or the message points into `input` (a replayed
    item), or into `tools` (a tool the replay offers, such as the custom tool whose calls it replays)."""
    said = f"{error.get('param') or ''} {error.get('message') or ''}"
    return "input" in said or "tools" in said


@check("responses.replay.accepted_or_refused", level=Level.MUST, applies=responses_replay, ref=OPENAI_RESPONSES_CREATE,
       title="a replayed transcript (`store: false`) is answered, or refused with a 4xx naming the item or tool it "
             "refuses, never a 5xx", proven_by=("replay-mid-history-system-500",))
def replay_accepted_or_refused(observed: Observed) -> Iterator[Failure | Note]:
    # Codex sends its whole transcript every turn with store: false; a server that cannot take one of its items must
    # say which, so the user can turn off what sends it. A 5xx or an unnamed refusal leaves Codex retrying blind.
    exchange, form = observed.exchange, observed.case.replay
    status = exchange.status or 0
    if 200 <= status < 300:
        yield Note(f"{form}: accepted")
    elif 400 <= status < 500 and names_the_item(exchange):
        yield Note(f"{form}: refused, HTTP {status} naming what it refuses: {exchange.body_excerpt(200)}")
    else:
        yield Failure(f"a 2xx, or a 4xx naming the input item ({form}) or tool it refuses", f"HTTP {status}",
                      exchange.body_excerpt(300))


@check("responses.replay.history_used", level=Level.MUST, applies=responses_replay, ref=OPENAI_RESPONSES_CREATE,
       title="a replayed transcript (`store: false`) is answered with it in context (more input tokens than its last "
             "user message alone)", proven_by=("replay-forgotten",))
def replay_history_used(observed: Observed) -> Iterator[Failure]:
    # Proof without trusting the model, as responses.chain.history_used: the last message alone costs fewer tokens.
    if not observed.succeeded:
        raise NotApplicable("the replay was refused: responses.replay.accepted_or_refused judges that")
    alone = observed.turns.get("alone")
    if alone is None:
        raise NotApplicable("the case sends no turn `alone` to measure the replay against")
    try:
        with_history, without = input_tokens(response_object(observed.exchange)), input_tokens(
            _answer(_sent(observed, alone)))
    except _Refused as refused:
        yield refused.failure
        return
    unread = history_unread(with_history, without, "the last user message alone",
                            "for the whole transcript: a 200 that forgot the history")
    if unread is not None:
        yield Failure(*unread, observed.exchange.body_excerpt(300))
