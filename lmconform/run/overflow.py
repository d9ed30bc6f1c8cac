"""The prompt of a case that overflows the context (`"overflows_context": true`), sized from what the target says
its context is: llama.cpp's `GET /props` (the context a request gets), else the models list (the entry of the run's
model, else the largest any entry states), with a margin over it; where the target states nothing, over the
context of any model people run. The case's text names the word to repeat: its run of one word repeated is
replaced by as many of that word as the size needs, one token each in every tokenizer agents meet."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lmconform.checks.scope import member_at
from lmconform.normalize.context_length import CONTEXT_LENGTH_AT, PROPS_CONTEXT_AT, PROPS_PATH
from lmconform.target import Target
from lmconform.wire.http import HttpExchange, send

# Where nothing states the context: over 2^18 tokens, the largest native context of the models people run on local
# servers (Qwen3's and Qwen3-Coder's 262,144; gpt-oss and Llama 3.x have 131,072), with the margin below: 295,000
# words of one letter, under 600 KB. A million tokens (a context stretched by rope scaling, Llama 4's) needs more
# memory than such machines have, and a prompt over it (2 MB and more) would be refused for its size by the 1 MiB
# request limits of proxies (nginx's default `client_max_body_size`) and of the reference server's Responses API
# before any context is reached: a 413 that says nothing about the context.
ANY_MODEL_CONTEXT = 262_144
MODELS_PATH = "/v1/models"
# A run of one word repeated, eight times at least, in a case's text: the part the size replaces.
REPEATED_WORD = re.compile(r"\b(\w+)(?: \1\b){7,}")


@dataclass(frozen=True)
class StatedContext:
    tokens: int | None  # None: the target states no context
    where: str  # where it was read, or why nothing was

    @property
    def prompt_words(self) -> int:
        """Words enough to overflow it: an eighth more, and 64 more, so that a tokenizer counting a word short, a
        chat template's tokens or an answer's room do not bring it back under (4096 → 4672)."""
        tokens = self.tokens if self.tokens is not None else ANY_MODEL_CONTEXT
        return tokens + tokens // 8 + 64


def _whole_number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def from_props(props: HttpExchange) -> StatedContext | None:
    if not props.succeeded or not isinstance(props.json, dict):
        return None
    tokens = _whole_number(member_at(props.json, PROPS_CONTEXT_AT))
    return StatedContext(tokens, f"GET {PROPS_PATH}: {'.'.join(PROPS_CONTEXT_AT)}") if tokens else None


def from_models(models: HttpExchange, model: str | None) -> StatedContext | None:
    data = models.json.get("data") if models.succeeded and isinstance(models.json, dict) else None
    entries = [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []
    named = [entry for entry in entries if entry.get("id") == model]
    stated = [(tokens, f"GET {MODELS_PATH}: {entry.get('id')}: {'.'.join(path)}")
              for entry in named or entries for path in CONTEXT_LENGTH_AT
              if (tokens := _whole_number(member_at(entry, path))) is not None]
    return StatedContext(*max(stated)) if stated else None


def stated_context(target: Target) -> StatedContext:
    """What the target says its context is: llama-server's loaded context before the models list, which states the
    context a model was trained on there (`meta.n_ctx_train`), often far more than it runs with."""
    return from_props(send(target, "GET", PROPS_PATH)) \
        or from_models(send(target, "GET", MODELS_PATH), target.model) \
        or StatedContext(None, f"no context stated (GET {PROPS_PATH}, GET {MODELS_PATH}): over any model's, "
                               f"{ANY_MODEL_CONTEXT} tokens")


def sized(body: Any, words: int) -> Any:
    """The body with each run of one word repeated made `words` long."""
    if isinstance(body, str):
        return REPEATED_WORD.sub(lambda run: " ".join([run[1]] * words), body)
    if isinstance(body, list):
        return [sized(item, words) for item in body]
    if isinstance(body, dict):
        return {key: sized(value, words) for key, value in body.items()}
    return body
