"""`GET /v1/models`: what clients (Void's model list, the SDKs' `models.list()`) read first."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.models.checks.scope import models_list
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_MODELS
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, shown


@check("models.list.openai_shape", level=Level.MUST, applies=models_list, ref=OPENAI_MODELS,
       title='`/v1/models` lists at least one model as `{"object": "list", "data": [{"id", "object": "model"}]}`',
       proven_by=("model-object-missing",))
def openai_shape(observed: Observed) -> Iterator[Failure]:
    # A refusal is http.status.success_for_valid_request's finding: this check judges the list that came back.
    observed.require_success()
    exchange = observed.exchange
    body = exchange.json
    if not isinstance(body, dict):
        yield Failure("a JSON object", f"{exchange.content_type or 'untyped'} body", exchange.body_excerpt())
        return
    data = body.get("data")
    if body.get("object") != "list" or not isinstance(data, list) or not data:
        yield Failure('"object": "list" and a non-empty "data" list',
                      f'object {shown(body.get("object"))}, data {shown(data)}'[:200],
                      exchange.body_excerpt())
        return
    for position, model in enumerate(data):
        if not isinstance(model, dict) or not isinstance(model.get("id"), str) or not model["id"] \
                or model.get("object") != "model":
            yield Failure('{"id": "<non-empty>", "object": "model"}', f"data[{position}] = {shown(model)}"[:200],
                          exchange.body_excerpt())
