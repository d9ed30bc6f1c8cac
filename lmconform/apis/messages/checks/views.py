"""What the Messages checks read of an answer: its events, and the message a client ends up with, each read once
however many checks ask."""

from __future__ import annotations

from lmconform.apis.messages.normalize import MessagesStream, message_object, normalize_messages_stream
from lmconform.checks.observed import Observed


def require_messages_stream(observed: Observed) -> MessagesStream:
    """The events of an answer that is an event stream; a check of streams has nothing to judge in any other."""
    observed.require_event_stream()
    return observed.exchange.view(normalize_messages_stream)


def final_message(observed: Observed) -> dict:
    """The message a client ends up with, from the body or the stream accumulated."""
    return observed.exchange.view(message_object)
