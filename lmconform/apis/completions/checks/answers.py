"""Legacy text completions: the object they are, the text each choice carries, and what the request's options ask of
the text (its end at `max_tokens`, the prompt before it with `echo`, the log probabilities of its tokens, its stop
sequences left out)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.completions.checks.scope import (
    completions_answer,
    completions_echo,
    completions_logprobs,
    completions_stop,
    completions_streamed,
)
from lmconform.apis.completions.checks.views import logprobs_of, payloads, require_stream
from lmconform.apis.completions.normalize import first_choice
from lmconform.checks.observed import Observed, output_cap
from lmconform.checks.refs import OPENAI_COMPLETIONS_CREATE, OPENAI_COMPLETIONS_OBJECT
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, shown

LOGPROBS_KEYS = ("tokens", "token_logprobs", "top_logprobs", "text_offset")


@check("completions.object.text_completion", level=Level.SHOULD, applies=completions_answer,
       ref=OPENAI_COMPLETIONS_OBJECT, title="`object` is text_completion on the body and on every chunk",
       proven_by=("completions-object-chat",))
def object_text_completion(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the SDKs type the object and read it as it comes; a client that tells a completion from a chat
    # completion by it takes the other path.
    for payload, where in payloads(observed):
        if payload.get("object") != "text_completion":
            yield Failure('"object": "text_completion"', f'"object": {shown(payload.get("object"))}', where)
            return


@check("completions.stream.text_in_choice", level=Level.MUST, applies=completions_streamed,
       ref=OPENAI_COMPLETIONS_CREATE, title="every streamed choice carries its piece of the answer as `text`",
       proven_by=("completions-delta-instead-of-text",))
def text_in_choice(observed: Observed) -> Iterator[Failure]:
    # MUST: a client of this API puts together choices[0].text (what an editor inserts at the cursor); a piece sent
    # as a chat `delta` reaches it as nothing.
    for chunk in require_stream(observed).data_chunks():
        choice = first_choice(chunk.payload)
        if choice and not isinstance(choice.get("text"), str):
            found = "no `text`" + (f", a `delta` {shown(choice['delta'])}" if "delta" in choice else "")
            yield Failure("`text`, a string", found if "text" not in choice else f"text {shown(choice['text'])}",
                          str(chunk.source))
            return


@check("completions.finish_reason.length_at_max_tokens", level=Level.SHOULD, applies=completions_answer,
       ref=OPENAI_COMPLETIONS_OBJECT, title='a text cut at `max_tokens` ends with finish_reason "length"',
       proven_by=("completions-finish-stop-at-max-tokens",))
def length_at_max_tokens(observed: Observed) -> Iterator[Failure]:
    # SHOULD: "length" tells a client the text is cut and a continuation may follow; "stop" says it is whole.
    cap = output_cap(observed.request_body, "max_tokens")
    end = observed.generation.end
    usage = end.usage if end is not None and isinstance(end.usage, dict) else {}
    used = usage.get("completion_tokens")
    if end is None or cap is None or not isinstance(used, int) or used < cap:
        raise NotApplicable("the answer did not use up the request's max_tokens")
    if end.finish_reason != "length":
        yield Failure('finish_reason "length"', f"finish_reason {shown(end.finish_reason)} after {used} of {cap} "
                      "tokens", str(end.source))


@check("completions.echo.prompt_first", level=Level.SHOULD, applies=completions_echo, ref=OPENAI_COMPLETIONS_CREATE,
       title="with `echo: true` the text begins with the prompt", proven_by=("completions-echo-ignored",))
def echo_prompt_first(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a client that asks for the prompt back reads it (and its tokens' log probabilities) from the text.
    observed.require_success()
    prompt = observed.request_body.get("prompt")
    if not isinstance(prompt, str):
        raise NotApplicable("the prompt is not one string")
    text = observed.generation.text()
    if not text.startswith(prompt):
        yield Failure(f"a text beginning with the prompt {shown(prompt[:80])}", f"{shown(text[:120])}",
                      observed.exchange.body_excerpt(300))


@check("completions.logprobs.when_asked", level=Level.SHOULD, applies=completions_logprobs,
       ref=OPENAI_COMPLETIONS_OBJECT, title="`logprobs: N` brings each choice's tokens with their log probabilities",
       proven_by=("completions-logprobs-dropped",))
def logprobs_when_asked(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a client that asked for them reads tokens, token_logprobs, top_logprobs and text_offset, one entry a
    # token; null leaves it nothing to read.
    found = [logprobs for logprobs in logprobs_of(observed)
             if not (isinstance(logprobs, dict) and all(isinstance(logprobs.get(key), list) for key in LOGPROBS_KEYS))]
    if found:
        yield Failure(f"logprobs with {', '.join(LOGPROBS_KEYS)}", f"{shown(found[0])}"[:200],
                      observed.exchange.body_excerpt(300))


@check("completions.stop.excluded", level=Level.SHOULD, applies=completions_stop, ref=OPENAI_COMPLETIONS_CREATE,
       title="a stop sequence is not part of the text", proven_by=("completions-stop-included",))
def stop_excluded(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the reference says the text will not contain the stop sequence; an editor inserts what it gets, the
    # sequence it stopped at included.
    observed.require_success()
    stop = observed.request_body.get("stop")
    stops = [stop] if isinstance(stop, str) else [item for item in stop if isinstance(item, str) and item]
    text = observed.generation.text()
    prompt = observed.request_body.get("prompt") if observed.request_body.get("echo") is True else None
    completion = text[len(prompt):] if isinstance(prompt, str) and text.startswith(prompt) else text
    found = [item for item in stops if item in completion]
    if found:
        yield Failure(f"no {json.dumps(found[0])} in the text", f"{shown(completion[-120:])}",
                      observed.exchange.body_excerpt(300))
