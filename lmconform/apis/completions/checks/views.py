"""What the text completions checks read of an answer: its chunks, and the text and ending of its first choice
(from the body, or the stream's chunks put together), each read once however many checks ask."""

from __future__ import annotations

from lmconform.apis.completions.normalize import CompletionStream, first_choice, normalize_completions_stream
from lmconform.checks.observed import Observed


def require_stream(observed: Observed) -> CompletionStream:
    """The chunks of an answer that is an event stream; a check of streams has nothing to judge in any other."""
    observed.require_event_stream()
    return observed.exchange.view(normalize_completions_stream)


def payloads(observed: Observed) -> list[tuple[dict, str]]:
    """The body, or each chunk of the stream, with where it is for evidence."""
    observed.require_success()
    if observed.exchange.is_event_stream:
        return [(chunk.payload, str(chunk.source)) for chunk in require_stream(observed).data_chunks()]
    body = observed.exchange.json
    return [(body, observed.exchange.body_excerpt(300))] if isinstance(body, dict) else []


def logprobs_of(observed: Observed) -> list[dict | None]:
    """The first choice's `logprobs` of the body, or of each chunk whose choice carries a piece of the text."""
    return [first_choice(payload).get("logprobs") for payload, _ in payloads(observed)
            if first_choice(payload).get("text") or not observed.exchange.is_event_stream]
