"""How lmconform reads the answers of an API: what the API's `normalize.py` declares as `READING`. The run builds
further turns with it, and every check that judges a generation reads answers through it, whatever the API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from lmconform.api_table import api_of
from lmconform.normalize.events import Generation
from lmconform.normalize.usage import UsageFields
from lmconform.wire.exchange import Exchange

Normaliser = Callable[[Exchange], Generation]
# A further turn's body: from the request's body, the turn's own fields, the previous answer's id (or None), and
# when the turn answers a function call, (call id, output) and the answer that made the call (an API that keeps
# no conversation sends that answer back).
Continuation = Callable[[dict, dict, "str | None", "tuple[str, str] | None", "Exchange | None"], dict]


@dataclass(frozen=True)
class Reading:
    # Any answer of the API in the generation vocabulary, from whichever form arrived; None for an API that answers
    # with no generation (the model list).
    generation: Normaliser | None = None
    # For an API whose cases have further turns: how a turn's body is built, and (for one that continues
    # conversations server-side) the id of an answer that a later turn continues.
    continuation: Continuation | None = None
    answer_id: Callable[[Exchange], str | None] | None = None
    usage: UsageFields | None = None  # where its usage object (the End's `usage`) keeps each count
    # The log probabilities of an answer's text as sent, one entry a token, in order (a stream's put together);
    # None when the answer carries none at all, for an API whose requests can ask for them.
    logprobs: Callable[[Exchange], list | None] | None = None

    @property
    def generates(self) -> bool:
        return self.generation is not None


@cache
def reading(api: str) -> Reading:
    """The reading of an API's answers; an API without a normalize.py has nothing to read but its JSON."""
    module = api_of(api).room("normalize")
    return module.READING if module is not None else Reading()
