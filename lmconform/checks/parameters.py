"""The parameter matrix: each optional request parameter of an API, sent one at a time on an otherwise plain request,
graded honoured (accepted, and its effect shows where it has one), refused (a 4xx) or ignored (accepted, and its
effect does not show). What an effect is, and how an answer shows it, is the API reference's: a stop string ends the
text before it, an output cap cuts the answer, `n` gives n choices, a seed gives a sampled request sent twice the
same answer, the Responses API echoes its settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from lmconform.cases import Case
from lmconform.checks.observed import Observed, generation_of
from lmconform.checks.refs import OPENAI_CHAT_CREATE
from lmconform.checks.registry import check
from lmconform.checks.scope import member_at, over_http
from lmconform.normalize.data_events import read_data_events
from lmconform.normalize.errors import refusal_words
from lmconform.normalize.reading import reading
from lmconform.vocabulary import Failure, Grade, Level, NotApplicable

MATRIX = "parameter"  # the results record's key for this matrix
# What an effect is, and what the answer shows of it (None: nothing).
Effect = tuple[str, Callable[[Observed], str | None]]


def graded_by_effect(observed: Observed, family: str, effect: Effect | None, matrix: str) -> Iterator[Failure | Grade]:
    """What the server did with one thing a request sends: refused (a 4xx), honoured (accepted, and `effect` shows, or
    there is none to show) or ignored (accepted, and it does not show: a failure beside the grade)."""
    exchange = observed.exchange
    if 400 <= (exchange.status or 0) < 500:
        yield Grade(family, "refused", refusal_words(exchange), matrix)
        return
    if not observed.succeeded:
        raise NotApplicable(f"answered HTTP {exchange.status}: http.status.success_for_valid_request reports it")
    if effect is None:
        yield Grade(family, "honoured", f"accepted (HTTP {exchange.status}); no answer shows more of it", matrix)
        return
    expected, shown = effect
    seen = shown(observed)
    if seen is not None:
        yield Grade(family, "honoured", f"accepted, and {seen}", matrix)
        return
    yield Grade(family, "ignored", f"accepted, and no {expected} in the answer", matrix)
    yield Failure(f"{expected}, as `{family}` asks", f"no {expected}", exchange.body_excerpt(300))


def _asked(observed: Observed, parameter: str) -> Any:
    """The value the request sent for a parameter named by its dotted path (`reasoning.effort`)."""
    return member_at(observed.request_body, tuple(parameter.split(".")))


def _stopped(parameter: str) -> Callable[[Observed], str | None]:
    def shown(observed: Observed) -> str | None:
        asked = _asked(observed, parameter)
        stops = [asked] if isinstance(asked, str) else [stop for stop in asked or [] if isinstance(stop, str)]
        text = observed.generation.text()
        met = [stop for stop in stops if stop and stop in text]
        return None if met else f"the text ends before {' or '.join(map(repr, stops))}: {text[-60:]!r}"
    return shown


def _cut(observed: Observed) -> str | None:
    end = observed.generation.end
    if end is None:
        raise NotApplicable("the answer has no end whose reason could say it was cut")
    reason = end.finish_reason
    return f"the answer is cut ({reason!r})" if reason in ("length", "max_tokens", "incomplete") else None


def _entries(observed: Observed) -> list:
    """The answer's log probabilities; an answer with no text has no tokens to give them for."""
    if not observed.generation.text():
        raise NotApplicable("the answer has no text whose tokens could have log probabilities")
    read = reading(observed.case.api).logprobs
    return (read(observed.exchange) if read is not None else None) or []


def _logprobs(observed: Observed) -> str | None:
    entries = _entries(observed)
    return f"{len(entries)} tokens come with their log probabilities" if entries else None


def _alternatives(observed: Observed) -> str | None:
    entries = _entries(observed)
    asked = _asked(observed, "top_logprobs")
    given = [entry.get("top_logprobs") for entry in entries if isinstance(entry, dict)]
    if not given or any(not isinstance(tops, list) or len(tops) != asked for tops in given):
        return None
    return f"each of {len(given)} tokens brings {asked} alternatives"


def _one_call(observed: Observed) -> str | None:
    calls = observed.generation.tool_calls()
    if not calls:
        raise NotApplicable("the answer calls no tool: whether it would call two at once does not show")
    return f"one call ({calls[0].name})" if len(calls) == 1 else None


def _body(observed: Observed) -> dict[str, Any]:
    """The answer's JSON object; a body that is not one (cut short, say) shows nothing of an echo or a count."""
    body = observed.exchange.json
    if not isinstance(body, dict):
        raise NotApplicable("the answer's body is not a JSON object")
    return body


def _choices(observed: Observed) -> str | None:
    """`n` choices: in a body, n entries of `choices`; in a stream, chunks for each index from 0 to n - 1, each
    choice ending with a finish reason of its own (a client that puts the choices together by index waits for each)."""
    asked = _asked(observed, "n")
    if not observed.exchange.is_event_stream:
        choices = _body(observed).get("choices")
        return f"{asked} choices" if isinstance(choices, list) and len(choices) == asked else None
    finishes: dict[object, object] = {}  # each index a chunk gave, and the last finish reason it gave it
    for event in observed.exchange.view(read_data_events):
        choices = event.payload.get("choices") if isinstance(event.payload, dict) else None
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict):
                reason = choice.get("finish_reason")
                finishes[choice.get("index")] = reason if reason is not None else finishes.get(choice.get("index"))
    if finishes.get(0) is None:  # a stream cut or failed, not a choice left out
        raise NotApplicable("the stream does not finish its first choice: the stream checks report it")
    if set(finishes) != set(range(asked)) or None in finishes.values():
        return None
    return f"{asked} streamed choices, indexes 0 to {asked - 1}, each ending ({', '.join(map(repr, finishes.values()))})"


AGAIN = "again"  # the turn of a case that sends its request a second time, to compare the two answers


def _repeated(observed: Observed) -> str | None:
    """The answer to the request sent again (the case's turn `again`) the same as the first: what a seed is for."""
    played = observed.turns.get(AGAIN)
    again = played.exchange if played is not None else None
    if again is None:
        raise NotApplicable(f"the request was not sent again: {played.skipped if played else 'the case has no turn'}")
    if not again.succeeded:
        raise NotApplicable(f"the request sent again was answered {again.status_text}")
    first, second = observed.generation.text(), generation_of(observed.case.api, again).text()
    return f"the request sent again gets the same answer: {first[:60]!r}" if first == second else None


def _echoed(parameter: str) -> Callable[[Observed], str | None]:
    def shown(observed: Observed) -> str | None:
        asked, given = _asked(observed, parameter), member_at(_body(observed), tuple(parameter.split(".")))
        return f"the response echoes `{parameter}`" if given == asked else None
    return shown


STOPPED = "text ending before the stop string"
CUT = "answer cut at the cap"
# Each parameter with an effect its API's reference states, by (API, parameter); the others are honoured when they are
# accepted: a sampler's setting (`temperature`, `top_k`), a note for the server's own records (`user`, chat's
# `prompt_cache_key`, which the chat.completion object does not echo as the Responses API's response does), or a
# reasoning setting, which a model that does not reason may take and not show (`reasoning.effort`, native `reasoning`).
EFFECTS: dict[tuple[str, str], Effect] = {
    ("chat", "stop"): (STOPPED, _stopped("stop")),
    ("chat", "max_tokens"): (CUT, _cut),
    ("chat", "logprobs"): ("log probabilities", _logprobs),
    ("chat", "top_logprobs"): ("alternatives as many as asked", _alternatives),
    ("chat", "parallel_tool_calls"): ("single call", _one_call),
    ("chat", "n"): ("choice for each of `n`", _choices),
    ("chat", "seed"): ("answer repeated by the same request sent again", _repeated),
    ("responses", "max_output_tokens"): (CUT, _cut),
    ("responses", "metadata"): ("echo of `metadata`", _echoed("metadata")),
    ("responses", "temperature"): ("echo of `temperature`", _echoed("temperature")),
    ("responses", "prompt_cache_key"): ("echo of `prompt_cache_key`", _echoed("prompt_cache_key")),
    ("responses", "parallel_tool_calls"): ("single call", _one_call),
    ("messages", "stop_sequences"): (STOPPED, _stopped("stop_sequences")),
    ("messages", "tool_choice.disable_parallel_tool_use"): ("single call", _one_call),
}


def grades_parameter(case: Case) -> bool:
    """A request that sends one optional parameter, to grade what the server does with it."""
    return case.parameter is not None and over_http(case)


@check("generation.parameter.grade", level=Level.SHOULD, applies=grades_parameter, ref=OPENAI_CHAT_CREATE,
       title="what the server does with one optional request parameter: honoured (accepted, and its effect shows "
             "where it has one), refused (a 4xx) or ignored (accepted, and the effect its reference states does not "
             "show)",
       proven_by=("stop-ignored", "n-ignored", "seed-ignored", "parallel-calls-ignored", "messages-parallel-not-disabled"))
def parameter_grade(observed: Observed) -> Iterator[Failure | Grade]:
    # SHOULD: an ignored parameter an agent relies on (a stop string, one call at a time) is a finding; a refusal is
    # http.status.success_for_valid_request's, since the request is valid.
    parameter, api = observed.case.parameter or "", observed.case.api
    family = f"{api}: {parameter}{' (streamed)' if observed.case.streamed else ''}"  # a case of each form
    yield from graded_by_effect(observed, family, EFFECTS.get((api, parameter)), MATRIX)
