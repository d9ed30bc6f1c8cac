"""`GET /v1/models`: what clients (Void's model list, the SDKs' `models.list()`) read first."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.models.checks.scope import models_list
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_MODELS
from lmconform.checks.registry import check
from lmconform.checks.scope import member_at
from lmconform.normalize.context_length import CONTEXT_LENGTH_AT
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, shown


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


@check("models.list.context_length_readable", level=Level.SHOULD, applies=models_list, ref=OPENAI_MODELS,
       title="a context length a model entry states (`max_model_len`, `max_context_length`, `context_length`, "
             "`meta.n_ctx_train`) is a positive whole number",
       proven_by=("models-context-length-string",))
def context_length_readable(observed: Observed) -> Iterator[Failure | Note]:
    # SHOULD: OpenAI's list states none, and agents then take the user's setting; one they read from the list
    # (opencode, Codex) sizes their history by it, and a value that is no number leaves them to guess.
    observed.require_success()
    body = observed.exchange.json
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise NotApplicable("no list of models: models.list.openai_shape reports it")
    for model in (entry for entry in data if isinstance(entry, dict)):
        for path in CONTEXT_LENGTH_AT:
            stated = member_at(model, path)
            if stated is None:
                continue
            where = f"{model.get('id')}: {'.'.join(path)}"
            if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
                yield Note(f"context length {stated} ({where})")
            else:
                yield Failure("a positive whole number of tokens", f"{where} = {shown(stated)}"[:200],
                              observed.exchange.body_excerpt())
    if not any(member_at(model, path) is not None for model in data if isinstance(model, dict)
               for path in CONTEXT_LENGTH_AT):
        yield Note("the list states no model's context length")
