"""The prompt of the overflow cases is sized from the context the server states: over it by an eighth and 64 words
where it states one (llama.cpp's `/props` first, then the models list), over any model's where it states none; and
the reference server refuses each size as an overflow."""

from __future__ import annotations

import pytest

from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import evaluate
from lmconform.reference.model import CONTEXT_WORDS
from lmconform.reference.wire import DEFAULT_MODEL
from lmconform.run.overflow import ANY_MODEL_CONTEXT, StatedContext, sized, stated_context
from lmconform.run.play import play
from lmconform.target import Target

OVERFLOW_CHECK = "errors.context_overflow.refused_as_overflow"


def _target(server, fault: str | None = None) -> Target:
    base = f"{server.base_url}/faults/{fault}" if fault else server.base_url
    return Target(base_url=base, model=DEFAULT_MODEL, profile="reference")


def _case(case_id: str):
    return next(case for case in load_cases(case_id.split("/")[0]) if case.id == case_id)


def test_a_stated_context_gets_a_prompt_over_it_by_an_eighth_and_64_words():
    assert StatedContext(4096, "").prompt_words == 4672
    assert StatedContext(131072, "").prompt_words == 147520


def test_where_nothing_is_stated_the_prompt_is_over_any_models_context():
    assert ANY_MODEL_CONTEXT == 2**18
    assert StatedContext(None, "").prompt_words == ANY_MODEL_CONTEXT + ANY_MODEL_CONTEXT // 8 + 64


def test_the_run_of_one_word_is_what_the_size_replaces():
    body = {"messages": [{"role": "user", "content": "Count the words: a a a a a a a a"}], "model": "a b"}
    assert sized(body, 12) == {"messages": [{"role": "user", "content": "Count the words: " + " ".join("a" * 12)}],
                               "model": "a b"}


@pytest.mark.parametrize(("fault", "tokens", "where"), [
    (None, CONTEXT_WORDS, "GET /v1/models: lmconform-reference: max_context_length"),
    ("models-context-length-vllm", CONTEXT_WORDS, "GET /v1/models: lmconform-reference: max_model_len"),
    # llama-server's list states the context the model was trained on (32768); /props the one it is loaded with.
    ("models-context-length-llama-cpp", CONTEXT_WORDS, "GET /props: default_generation_settings.n_ctx"),
    ("models-context-length-string", None, "no context stated"),
])
def test_the_context_is_read_where_the_server_states_it(server, fault, tokens, where):
    stated = stated_context(_target(server, fault))
    assert stated.tokens == tokens and stated.where.startswith(where), stated


@pytest.mark.parametrize(("case_id", "fault", "words"), [
    ("chat/context-overflow", None, StatedContext(CONTEXT_WORDS, "").prompt_words),
    ("messages/context-overflow-stream", "models-context-length-llama-cpp", StatedContext(CONTEXT_WORDS, "").prompt_words),
    ("responses/context-overflow", "models-context-length-string", StatedContext(None, "").prompt_words),
])
def test_the_reference_server_refuses_the_sized_prompt_as_an_overflow(server, case_id, fault, words):
    observed = play(_case(case_id), _target(server, fault))
    sent = str(observed.exchange.request.body)
    assert sent.count(" a") == words, sent[:200]
    assert observed.exchange.status == 400
    assert str(evaluate(REGISTRY[OVERFLOW_CHECK], observed).outcome) == "OK"
