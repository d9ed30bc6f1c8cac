"""What the same request must get whether it is streamed or not (a case with `"pair": "stream"`), and what a server
that keeps its answers must give back by id: the same end, the same tool calls with arguments of the same shape,
and where the request leaves the model one answer, the same answer. Each API's answers are read through its
normaliser, so these are written once for every API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.checks.observed import Observed, generation_of
from lmconform.checks.refs import OPENAI_CHAT_STREAMING, OPENAI_RESPONSES_GET
from lmconform.checks.registry import check
from lmconform.checks.scope import paired, paired_forced_enum, paired_stored
from lmconform.normalize.events import Generation
from lmconform.vocabulary import Failure, Level, NotApplicable, Unsupported, shown


def _pair(observed: Observed) -> tuple[Generation, Generation]:
    """The streamed answer and the body, in the generation vocabulary."""
    streamed, body = observed.pair()
    return generation_of(observed.case.api, streamed), generation_of(observed.case.api, body)


def _shape(value: Any) -> Any:
    """What a client's code relies on in a value: its JSON type, and an object's keys with theirs."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    return type(value).__name__


def _calls(generation: Generation) -> list[tuple[str, Any]]:
    return [(call.name, call.parsed_arguments()[0]) for call in generation.tool_calls()]


def _paired_calls(observed: Observed) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """The calls of the streamed answer and of the body, each its name and parsed arguments."""
    streamed, body = _pair(observed)
    return _calls(streamed), _calls(body)


@check("generation.pair.finish_agrees", level=Level.MUST, applies=paired, ref=OPENAI_CHAT_STREAMING,
       title="the same request ends the same way streamed and not (finish reason, stop reason, status)",
       proven_by=("stream-finish-differs",))
def finish_agrees(observed: Observed) -> Iterator[Failure]:
    # MUST: clients branch on it (run the calls on "tool_calls", continue on "length"); a client that streams
    # takes another branch than one that does not (python-genai#2868).
    streamed, body = _pair(observed)
    if streamed.end is None or body.end is None:
        raise NotApplicable("one of the pair has no end: the stream checks report it")
    if streamed.end.finish_reason != body.end.finish_reason:
        yield Failure(f"the stream to end as the body does: {shown(body.end.finish_reason)}",
                      f"the stream ends {shown(streamed.end.finish_reason)}", str(streamed.end.source))


@check("generation.pair.tool_calls_agree", level=Level.MUST, applies=paired, ref=OPENAI_CHAT_STREAMING,
       title="the same request calls the same tools, with arguments of the same shape, streamed and not",
       proven_by=("stream-argument-dropped",))
def tool_calls_agree(observed: Observed) -> Iterator[Failure]:
    # MUST: an agent's tool code reads the argument keys the schema names; a stream that loses one breaks only the
    # clients that stream.
    in_stream, in_body = _paired_calls(observed)
    if not in_stream and not in_body:
        raise NotApplicable("neither answer calls a tool")
    names = ([name for name, _ in in_stream], [name for name, _ in in_body])
    if names[0] != names[1]:
        yield Failure(f"the calls of the body: {names[1]}", f"the stream calls {names[0]}", observed.exchange.body_excerpt(300))
        return
    for (name, streamed_arguments), (_, body_arguments) in zip(in_stream, in_body):
        if _shape(streamed_arguments) != _shape(body_arguments):
            yield Failure(f"{name}'s arguments shaped as in the body: {json.dumps(_shape(body_arguments))}",
                          f"in the stream: {json.dumps(_shape(streamed_arguments))}", observed.exchange.body_excerpt(300))


@check("generation.pair.forced_output_agrees", level=Level.SHOULD, applies=paired_forced_enum, ref=OPENAI_CHAT_STREAMING,
       title="a forced call of a tool whose arguments are enumerations gets the same arguments streamed and not",
       proven_by=("stream-argument-dropped",))
def forced_output_agrees(observed: Observed) -> Iterator[Failure]:
    # SHOULD: with the tool and every argument's set of values fixed by the request, a grammar-constrained server
    # has one answer to give at temperature 0; a stream that gives another is computed apart from the body.
    in_stream, in_body = _paired_calls(observed)
    if in_stream != in_body:
        yield Failure(f"the body's call: {json.dumps(in_body)}", f"the stream's: {json.dumps(in_stream)}",
                      observed.exchange.body_excerpt(300))


@check("generation.pair.text_agrees", level=Level.INFO, applies=paired, ref=OPENAI_CHAT_STREAMING,
       title="the same request gets the same text streamed and not (information: a real model need not repeat)",
       proven_by=("stop-flushed-in-stream",))
def text_agrees(observed: Observed) -> Iterator[Failure]:
    # INFO: temperature 0 alone does not make a real model repeat itself (batching and the order of floating-point
    # sums change the likeliest token); only a forced answer (generation.pair.forced_output_agrees) is held to it.
    streamed, body = _pair(observed)
    if streamed.text() != body.text():
        yield Failure(f"the body's text: {shown(body.text()[-120:])}", f"the stream's: {shown(streamed.text()[-120:])}",
                      observed.exchange.body_excerpt(300))


@check("generation.pair.stored_agrees", level=Level.MUST, applies=paired_stored, ref=OPENAI_RESPONSES_GET,
       title="an answer fetched by its id is the answer that was given: its status, text and tool calls",
       proven_by=("stored-before-done",))
def stored_agrees(observed: Observed) -> Iterator[Failure]:
    # MUST: a client that resumes a conversation, or a tool that audits one, reads the stored answer instead.
    _, body = observed.pair()
    stored = observed.paired.get("stored")
    if stored is None:
        raise NotApplicable("the answer was not fetched: the request asked not to store it, or it has no id")
    if not stored.succeeded:
        raise Unsupported(f"the server gives no answer back by id ({stored.status_text})")
    kept, given = generation_of(observed.case.api, stored), generation_of(observed.case.api, body)
    ends = (kept.end.finish_reason if kept.end else None, given.end.finish_reason if given.end else None)
    if ends[0] != ends[1]:
        yield Failure(f"the status the answer had: {shown(ends[1])}", f"{shown(ends[0])}", stored.body_excerpt(300))
    if (kept.text(), _calls(kept)) != (given.text(), _calls(given)):
        yield Failure(f"the output given: {shown(given.text()[:80])}, calls {_calls(given)}",
                      f"{shown(kept.text()[:80])}, calls {_calls(kept)}", stored.body_excerpt(300))
