"""`POST /v1/responses/input_tokens` and `POST /v1/responses/compact`, which Codex calls to count its context and to
compact a long transcript: offered, each answers its own object (a count at least what the same request is charged;
a compaction), or not offered (a 404, which the case's feature makes UNSUPPORTED); never a 200 with anything else."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.responses.checks.scope import responses_compacts, responses_counts
from lmconform.apis.responses.normalize import response_object
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_RESPONSES_COMPACT, OPENAI_RESPONSES_INPUT_TOKENS
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Unsupported, shown


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
    output = body.get("output") if isinstance(body.get("output"), list) else []
    kinds = [item.get("type") for item in output if isinstance(item, dict)]
    if body.get("object") != "response.compaction" or "compaction" not in kinds:
        yield Failure('object "response.compaction" with a `compaction` item in `output`',
                      f"object {shown(body.get('object'))}, output items {kinds}", observed.exchange.body_excerpt(300))
