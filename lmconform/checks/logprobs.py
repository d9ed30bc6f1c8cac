"""Log probabilities, where a request asks for them in OpenAI's per-token form (chat's `logprobs`, the Responses
API's `include: ["message.output_text.logprobs"]`): given in the documented shape, with tokens that make up the text
and as many alternatives as `top_logprobs` asked for, or refused with a 4xx; never silently left out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lmconform.checks.observed import Observed, in_every_answer
from lmconform.checks.refs import OPENAI_CHAT_LOGPROBS, OPENAI_RESPONSES_INCLUDE
from lmconform.checks.registry import check
from lmconform.checks.scope import alternatives_asked, asks_logprobs, asks_top_logprobs
from lmconform.normalize.reading import reading
from lmconform.vocabulary import Failure, Level, NotApplicable, shown


def _entries(observed: Observed) -> list | None:
    """The answer's log probabilities; a refusal, or an answer with no text, has none to judge."""
    observed.require_success()
    if not observed.generation.text():
        raise NotApplicable("the answer has no text (a tool call only) whose tokens could be judged")
    read = reading(observed.case.api).logprobs
    return read(observed.exchange) if read is not None else None


def _given_entries(observed: Observed) -> list:
    """The answer's log probabilities, for a check of what they say; their absence is given_or_refused's finding."""
    entries = _entries(observed)
    if not entries:
        raise NotApplicable("no log probabilities: generation.logprobs.given_or_refused speaks to that")
    return entries


def _token_problem(entry: Any, top: bool = True) -> str | None:
    """What keeps `entry` from being OpenAI's log probability of a token; None when nothing does."""
    if not isinstance(entry, dict):
        return f"an entry that is {shown(entry)}"
    if not isinstance(entry.get("token"), str):
        return f"token {shown(entry.get('token'))}"
    logprob = entry.get("logprob")
    if isinstance(logprob, bool) or not isinstance(logprob, int | float) or logprob > 0:
        return f"logprob {shown(logprob)}"
    encoded = entry.get("bytes")
    if encoded is not None and not (isinstance(encoded, list) and all(isinstance(b, int) for b in encoded)):
        return f"bytes {shown(encoded)}"
    if top:
        alternatives = entry.get("top_logprobs")
        if not isinstance(alternatives, list):
            return f"top_logprobs {shown(alternatives)}"
        return next((problem for item in alternatives if (problem := _token_problem(item, top=False))), None)
    return None


@check("generation.logprobs.given_or_refused", level=Level.SHOULD, applies=asks_logprobs, ref=OPENAI_RESPONSES_INCLUDE,
       title="log probabilities that were asked for are given, or the request is refused with a 4xx: never left out",
       proven_by=("logprobs-dropped", "responses-logprobs-dropped"))
@in_every_answer
def given_or_refused(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a client that asked (an evaluation harness, a confidence score) cannot tell "not supported" from "no
    # tokens" when they are silently absent; a 4xx tells it (llama.cpp#28478 dropped them with tools on).
    if not _entries(observed):
        yield Failure("log probabilities of the text's tokens, or a 4xx refusal", "an answer without any",
                      observed.exchange.body_excerpt(300))


@check("generation.logprobs.documented_shape", level=Level.MUST, applies=asks_logprobs, ref=OPENAI_CHAT_LOGPROBS,
       title="each token's log probability has `token`, `logprob` ≤ 0, `bytes` and `top_logprobs` of the same form",
       proven_by=("logprobs-malformed",))
@in_every_answer
def documented_shape(observed: Observed) -> Iterator[Failure]:
    # MUST: the SDKs parse each entry into a typed object; a missing member raises there.
    for position, entry in enumerate(_entries(observed) or []):
        problem = _token_problem(entry)
        if problem:
            yield Failure("{token, logprob, bytes, top_logprobs}", f"entry {position}: {problem}", shown(entry)[:300])
            return


@check("generation.logprobs.tokens_make_text", level=Level.MUST, applies=asks_logprobs, ref=OPENAI_CHAT_LOGPROBS,
       title="the tokens of the log probabilities, put together, are the answer's text",
       proven_by=("logprobs-tokens-mismatch",))
@in_every_answer
def tokens_make_text(observed: Observed) -> Iterator[Failure]:
    # MUST: a client maps each probability to its place in the text by adding up the tokens; tokens that do not
    # make the text put every probability in the wrong place.
    entries = _given_entries(observed)
    tokens = "".join(entry["token"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("token"), str))
    text = observed.generation.text()
    if tokens != text:
        at = next((i for i, (a, b) in enumerate(zip(tokens, text)) if a != b), min(len(tokens), len(text)))
        yield Failure(f"the text: {shown(text[max(0, at - 20):at + 40])}", f"tokens: {shown(tokens[max(0, at - 20):at + 40])}",
                      observed.exchange.body_excerpt(300))


@check("generation.logprobs.alternatives_as_asked", level=Level.SHOULD, applies=asks_top_logprobs,
       ref=OPENAI_CHAT_LOGPROBS, title="each token brings as many `top_logprobs` alternatives as `top_logprobs` asked for",
       proven_by=("top-logprobs-short",))
@in_every_answer
def alternatives_as_asked(observed: Observed) -> Iterator[Failure]:
    # SHOULD: `top_logprobs: N` is "the number of most likely tokens to return at each token position"; a client
    # that ranks the alternatives (a confidence score, a classifier reading the second choice) reads N of them, and a
    # server that sends another number (its own default, or one fewer) answers another question than was asked.
    entries = _given_entries(observed)
    asked = alternatives_asked(observed.case)
    for position, entry in enumerate(entries):
        alternatives = entry.get("top_logprobs") if isinstance(entry, dict) else None
        if isinstance(alternatives, list) and len(alternatives) != asked:
            yield Failure(f"{asked} alternatives at every token (top_logprobs: {asked})",
                          f"{len(alternatives)} at token {position} ({shown(entry.get('token'))})", shown(entry)[:300])
            return
