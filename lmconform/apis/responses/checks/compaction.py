"""`POST /v1/responses/input_tokens` and `POST /v1/responses/compact`, which Codex calls to count its context and to
compact a long transcript: offered, each answers its own object (a count at least what the same request is charged;
a compaction), or not offered (a 404, which the case's feature makes UNSUPPORTED); never a 200 with anything else.
The compaction sent back as input on the next turn is taken with the history it stands for, or refused naming it."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.responses.checks.chain import history_unread, input_tokens, names_the_item
from lmconform.apis.responses.checks.scope import responses_compaction_round_trip, responses_compacts, responses_counts
from lmconform.apis.responses.normalize import response_object
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_RESPONSES_COMPACT, OPENAI_RESPONSES_INPUT_TOKENS
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, Unsupported, shown


def _body(observed: Observed) -> dict:
    observed.require_success()
    return observed.exchange.json if isinstance(observed.exchange.json, dict) else {}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@check("responses.input_tokens.count_covers_answer", level=Level.MUST, applies=responses_counts,
       ref=OPENAI_RESPONSES_INPUT_TOKENS,
       title="`POST /v1/responses/input_tokens` answers `response.input_tokens`, a count at least the `input_tokens` "
             "the same request is charged", proven_by=("input-tokens-last-item",))
def count_covers_answer(observed: Observed) -> Iterator[Failure]:
    # Codex compacts when the count nears the model's window: a count short of the truth lets the next request
    # overflow it.
    body = _body(observed)
    count = _count(body.get("input_tokens"))
    if body.get("object") != "response.input_tokens" or count is None:
        yield Failure('object "response.input_tokens" with an integer `input_tokens`',
                      f"object {shown(body.get('object'))}, input_tokens {shown(body.get('input_tokens'))}",
                      observed.exchange.body_excerpt(300))
        return
    answered = observed.turns.get("answered")
    exchange = answered.exchange if answered is not None else None
    if exchange is None or not exchange.succeeded:
        raise NotApplicable("the same request to POST /v1/responses was not answered: nothing to compare with")
    usage = response_object(exchange).get("usage")
    charged = _count(usage.get("input_tokens")) if isinstance(usage, dict) else None
    if charged is None:
        raise Unsupported("the target reports no usage.input_tokens, so the count cannot be compared")
    if count < charged:
        yield Failure(f"at least {charged} (the input_tokens the same request is charged)", f"{count}",
                      observed.exchange.body_excerpt(300))


@check("responses.compact.is_compaction", level=Level.MUST, applies=responses_compacts, ref=OPENAI_RESPONSES_COMPACT,
       title="`POST /v1/responses/compact` answers `response.compaction`, whose output holds a `compaction` item",
       proven_by=("compact-as-response",))
def is_compaction(observed: Observed) -> Iterator[Failure]:
    # Codex replaces its transcript with the output: an ordinary response there drops the history it compacted.
    body = _body(observed)
    output = body.get("output")
    kinds = [item.get("type") for item in (output if isinstance(output, list) else []) if isinstance(item, dict)]
    if body.get("object") != "response.compaction" or "compaction" not in kinds:
        yield Failure('object "response.compaction" with a `compaction` item in `output`',
                      f"object {shown(body.get('object'))}, output items {kinds}", observed.exchange.body_excerpt(300))


@check("responses.compact.round_trip_used", level=Level.MUST, applies=responses_compaction_round_trip,
       ref=OPENAI_RESPONSES_COMPACT,
       title="the `compaction` item `POST /v1/responses/compact` answered is taken as input on the next turn with the "
             "history it stands for (more input tokens than the question alone), or refused with a 4xx naming it",
       proven_by=("compaction-input-500", "compaction-input-forgotten"))
def round_trip_used(observed: Observed) -> Iterator[Failure | Note]:
    # Codex replaces its transcript with the compaction and sends it back on every later turn: a 5xx stops it, and a
    # 200 that dropped the item answers a conversation without its history.
    observed.require_success()
    played = {name: turn for name, turn in observed.turns.items() if turn.turn.compaction_of}
    for name, turn in played.items():
        exchange = turn.exchange
        if exchange is None:
            raise NotApplicable(f"the turn {name!r} was not sent: {turn.skipped}")
        status = exchange.status or 0
        if 400 <= status < 500 and names_the_item(exchange):
            yield Note(f"the compaction item was refused, HTTP {status} naming it (a limit: Codex cannot go on after "
                       f"compacting): {exchange.body_excerpt(200)}")
            continue
        if not 200 <= status < 300 or exchange.error:
            yield Failure("a 2xx, or a 4xx naming the compaction item", f"HTTP {status} {exchange.error or ''}".strip(),
                          exchange.body_excerpt(300))
            continue
        alone = observed.turns.get("alone")
        if alone is None or alone.exchange is None or not alone.exchange.succeeded:
            raise NotApplicable("the question alone was not answered: nothing to measure the history against")
        with_history = input_tokens(response_object(exchange))
        without = input_tokens(response_object(alone.exchange))
        unread = history_unread(with_history, without, "the question alone",
                                "with the compaction item: a 200 that forgot the history")
        if unread is not None:
            yield Failure(*unread, exchange.body_excerpt(300))
        else:
            yield Note(f"accepted with its history: {with_history} input tokens, {without} for the question alone")
