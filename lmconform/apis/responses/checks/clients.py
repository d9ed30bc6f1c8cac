"""Client verdicts on Responses streams: the captured bytes replayed through the openai Python SDK's
`responses.stream()`, judged by what its users would see."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from lmconform.apis.responses.checks.scope import responses_streamed
from lmconform.apis.responses.checks.views import responses_stream
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_PYTHON_RESPONSES_HELPER
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Note
from lmconform.wire.http import HttpExchange

if TYPE_CHECKING:
    from lmconform.clients.openai_python import SdkResponsesOutcome

NO_COMPLETED = "Didn't receive a `response.completed` event"


def _sdk_responses_replay(exchange: HttpExchange) -> SdkResponsesOutcome:
    from lmconform.clients.openai_python import replay_responses_stream  # see lmconform.clients.load_sdks

    body = exchange.request.body
    assert isinstance(body, dict), "the checks that replay a stream judge streamed cases, whose body is an object"
    return replay_responses_stream(body, exchange)


def _calls(calls: Sequence[tuple[str | None, str | None]]) -> str:
    """Function calls as a reader writes them: `calculate({"expression": "2+2"})`, or `none`."""
    return ", ".join(f"{name}({arguments if arguments is not None else ''})" for name, arguments in calls) or "none"


def _sdk_responses(observed: Observed) -> SdkResponsesOutcome:
    observed.require_success()
    return observed.exchange.view(_sdk_responses_replay)


@check("client.openai_python.responses_stream", level=Level.MUST, kind="client", applies=responses_streamed,
       ref=OPENAI_PYTHON_RESPONSES_HELPER, title="the openai SDK's `responses.stream()` reads the stream without raising",
       proven_by=("content-part-added-missing",))
def sdk_responses_stream(observed: Observed) -> Iterator[Failure | Note]:
    outcome = _sdk_responses(observed)
    ended = responses_stream(observed).final_response() or {}
    if outcome.raised and NO_COMPLETED in outcome.raised and ended.get("status") == "incomplete":
        # get_final_response() waits for response.completed alone: it raises so for every answer that ended
        # response.incomplete (cut at max_output_tokens), OpenAI's own included. The stream itself was fine.
        yield Note(f"the SDK raised {outcome.raised[:120]}, as it does for any incomplete response")
    elif outcome.raised:
        yield Failure(f"openai {outcome.sdk_version} reads the stream", f"it raises {outcome.raised}",
                      observed.exchange.body_excerpt(300))


@check("client.openai_python.responses_matches_stream", level=Level.MUST, kind="client", applies=responses_streamed,
       ref=OPENAI_PYTHON_RESPONSES_HELPER,
       title="the openai SDK's final response shows the function calls the stream sent",
       proven_by=("arguments-done-mismatch",))
def sdk_responses_matches_stream(observed: Observed) -> Iterator[Failure]:
    # The SDK's final response is the terminal event's object: a stream whose deltas say otherwise shows users
    # one thing while it streams and stores another.
    outcome = _sdk_responses(observed)
    if outcome.raised:
        raise NotApplicable("the SDK raised; client.openai_python.responses_stream reports it")
    sent = observed.generation.tool_calls()
    seen = [(call.name, call.arguments) for call in outcome.function_calls]
    meant = [(call.name, call.arguments_text) for call in sent]
    if seen != meant:
        yield Failure(f"function calls {_calls(meant)}"[:200], f"the SDK shows {_calls(seen)}"[:200],
                      str(sent[0].started.source) if sent else "")
