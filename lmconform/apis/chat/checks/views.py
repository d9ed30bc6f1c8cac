"""What the chat completions checks read of an answer: its stream of chunks, read once however many checks ask."""

from __future__ import annotations

from lmconform.apis.chat.normalize import ChatStream, normalize_chat_stream
from lmconform.checks.observed import Observed


def chat_stream(observed: Observed) -> ChatStream:
    return observed.exchange.view(normalize_chat_stream)


def require_stream(observed: Observed) -> ChatStream:
    """The chunks of an answer that is an event stream; a check of streams has nothing to judge in any other."""
    observed.require_event_stream()
    return chat_stream(observed)
