"""How lmconform reads the answers of an API: what the API's `normalize.py` declares as `READING`. The run builds
further turns with it, and every check that judges a generation reads answers through it, whatever the API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, Protocol

from typing_extensions import TypeVar

from lmconform.api_table import api_of
from lmconform.normalize.events import Generation
from lmconform.normalize.usage import UsageFields
from lmconform.wire.exchange import Exchange

# The exchange an API's answers arrive in: its transport's (an HttpExchange, a StdioExchange).
ExchangeT = TypeVar("ExchangeT", bound=Exchange, default=Exchange)


class Continuation(Protocol):
    """A further turn's body: from the request's body, the turn's own fields, the previous answer's id (or None), and
    when the turn answers a function call, (call id, output) and the answer that made the call (an API that keeps no
    conversation sends that answer back; a turn over a WebSocket gives none)."""

    def __call__(self, request: dict, turn: dict, previous_id: str | None, call: tuple[str, str] | None,
                 answered: Exchange | None = None) -> dict: ...


@dataclass(frozen=True)
class Reading(Generic[ExchangeT]):
    # Any answer of the API in the generation vocabulary, from whichever form arrived; None for an API that answers
    # with no generation (the model list).
    generation: Callable[[ExchangeT], Generation] | None = None
    # For an API whose cases have further turns: how a turn's body is built, and (for one that continues
    # conversations server-side) the id of an answer that a later turn continues.
    continuation: Continuation | None = None
    answer_id: Callable[[ExchangeT], str | None] | None = None
    usage: UsageFields | None = None  # where its usage object (the End's `usage`) keeps each count
    # The log probabilities of an answer's text as sent, one entry a token, in order (a stream's put together);
    # None when the answer carries none at all, for an API whose requests can ask for them.
    logprobs: Callable[[ExchangeT], list | None] | None = None

    @property
    def generates(self) -> bool:
        return self.generation is not None


@cache
def reading(api: str) -> Reading[Any]:
    """The reading of an API's answers; an API without a normalize.py has nothing to read but its JSON. Which
    exchange its functions take is the API's transport's, which the API table knows only when the run asks."""
    module = api_of(api).room("normalize")
    return module.READING if module is not None else Reading()
