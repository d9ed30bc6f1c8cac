"""The reasoning contract every API shares, judged on the generation vocabulary: reasoning comes in the API's
reasoning channel (chat's `reasoning`/`reasoning_content`, Responses' reasoning items, Anthropic's thinking blocks,
LM Studio's `reasoning.*` events) and never in the answer's text, and a previous turn's reasoning sent back is
accepted and not repeated."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate

from lmconform.checks.observed import Observed
from lmconform.checks.refs import DEEPSEEK_THINKING_MODE, LLAMA_CPP_SERVER_README, VLLM_REASONING_OUTPUTS
from lmconform.checks.registry import check
from lmconform.checks.scope import carried_reasoning, carries_reasoning, generates_with_reasoning_channel
from lmconform.normalize.events import Text
from lmconform.vocabulary import Failure, Level, NotApplicable

_TAG = re.compile(r"</?think>")
# Reasoning shorter than this ("Yes.") may be in any answer by chance.
REPEAT_MIN_CHARS = 20


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _tag_shape(text: str) -> str:
    """What the tags in the text say of how the reasoning got there."""
    if "</think>" in text and "<think>" not in text:
        return "a lone `</think>`: the opener was in the prompt (a template that opens the reasoning), so the " \
               "text starts mid-thought"
    if "</think>" not in text:
        return "`<think>` never closed: the whole answer reads as reasoning"
    return "`<think>…</think>` in the text: no reasoning parser separated them"


@check("generation.reasoning.text_has_no_think_tags", level=Level.SHOULD, applies=generates_with_reasoning_channel,
       ref=LLAMA_CPP_SERVER_README,
       title="the answer's text holds no `<think>` or `</think>`: reasoning goes in the API's reasoning channel",
       proven_by=("reasoning-in-content", "think-close-only", "think-tags-split", "responses-reasoning-in-text",
                  "messages-thinking-in-text", "native-reasoning-in-message"))
def text_has_no_think_tags(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a client shows the text as the answer, thoughts and tags included, and an agent feeds them back as
    # what the model said; a server may leave tags in on purpose (llama-server's `reasoning_format: none`) for
    # clients that split them out themselves, which a lone closer or a tag cut between two events defeats.
    observed.require_success()
    pieces = [event for event in observed.generation.events if isinstance(event, Text) and event.channel == "content"]
    text = "".join(event.text for event in pieces)
    found = _TAG.search(text)
    if found is None:
        return
    observed.require_documented("reasoning_field")
    ends = list(accumulate(len(event.text) for event in pieces))
    first = next(position for position, end in enumerate(ends) if end > found.start())
    last = next(position for position, end in enumerate(ends) if end >= found.end())
    split = f"; the tag {found[0]!r} is cut across {last - first + 1} events" if last > first else ""
    yield Failure("the answer alone in the text, the reasoning in the reasoning channel",
                  f"{_tag_shape(text)}{split}: {text[:120]!r}", str(pieces[first].source))


@check("generation.reasoning.not_repeated_in_text", level=Level.SHOULD, applies=generates_with_reasoning_channel,
       ref=VLLM_REASONING_OUTPUTS, title="the reasoning is not repeated in the answer's text",
       proven_by=("reasoning-repeated-in-content",))
def not_repeated_in_text(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a client that shows both shows the thoughts twice, once as the answer; one that hides reasoning
    # shows it anyway. Clients still work.
    observed.require_success()
    reasoning = _squeezed(observed.generation.text("reasoning"))
    if len(reasoning) < REPEAT_MIN_CHARS:
        raise NotApplicable("no reasoning long enough to recognise")
    if reasoning in _squeezed(observed.generation.text()):
        yield Failure("the reasoning in its channel only", f"the same {len(reasoning)} characters in the text too: "
                      f"{reasoning[:80]!r}", observed.exchange.body_excerpt(300))


@check("generation.reasoning.round_trip_accepted", level=Level.SHOULD, applies=carries_reasoning,
       ref=DEEPSEEK_THINKING_MODE,
       title="a request carrying the previous turn's reasoning is answered, and that reasoning is not echoed",
       proven_by=("reasoning-input-refused", "reasoning-input-echoed", "responses-reasoning-input-refused",
                  "messages-thinking-input-refused"))
def round_trip_accepted(observed: Observed) -> Iterator[Failure]:
    # SHOULD: agents with interleaved thinking send each turn's reasoning back (DeepSeek's thinking mode requires it
    # after a tool call, Anthropic's thinking blocks are sent back with tool results); a server that refuses it
    # stops the agent's second turn, and one that reads it as the prompt answers it again. A server may still
    # refuse a member it does not know, so the agent can drop it and retry.
    if observed.case.overflows_context:  # an agent's request past the context: refused for its length, not this
        raise NotApplicable("the request is longer than the context (errors.context_overflow.refused_as_overflow)")
    status = observed.exchange.status or 0
    if status >= 400:
        yield Failure("a 2xx answer: the previous turn's reasoning accepted (or ignored)", f"HTTP {status}",
                      observed.exchange.body_excerpt(300))
        return
    observed.require_success()
    text = _squeezed(observed.generation.text())
    for carried in map(_squeezed, carried_reasoning(observed.request_body)):
        if len(carried) >= REPEAT_MIN_CHARS and carried in text:
            yield Failure("an answer to the new turn", f"the previous turn's reasoning in the text: {carried[:80]!r}",
                          observed.exchange.body_excerpt(300))
            return
