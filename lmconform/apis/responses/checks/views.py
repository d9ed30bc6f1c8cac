"""What the Responses checks read of an answer: its events, and the response object a client ends up with, each read
once however many checks ask."""

from __future__ import annotations

from lmconform.apis.responses.normalize import ResponsesStream, normalize_responses_stream, response_object
from lmconform.checks.observed import Observed


def responses_stream(observed: Observed) -> ResponsesStream:
    return observed.exchange.view(normalize_responses_stream)


def require_responses_stream(observed: Observed) -> ResponsesStream:
    """The events of an answer that is an event stream; a check of streams has nothing to judge in any other."""
    observed.require_event_stream()
    return responses_stream(observed)


def final_response(observed: Observed) -> dict:
    """The final response object, from the body or the stream's terminal event."""
    return observed.exchange.view(response_object)
