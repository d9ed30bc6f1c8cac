"""The memory behind `previous_response_id`, `GET` and `DELETE /v1/responses/{id}` and its input items: recent
responses, each with the conversation that led to it and the input of its own turn.

The memory is bounded, because a conformance run against a long-lived server may create responses without end:

- at most `capacity` entries (DEFAULT_STORE_SIZE, 10,000): the least recently used is forgotten first, and its
  id then answers `previous_response_not_found`, as it would after LM Studio restarts;
- at most ENTRY_SIZE (2 Mi) characters of JSON per entry: the response body that `GET` returns, its input items,
  plus the conversation. The conversation is trimmed like a context window: its HISTORY_ITEMS (256) most recent
  messages, fewer when they would pass the budget. A body that alone passes the budget is answered but not
  stored; a request body is at most MAX_BODY_BYTES (1 MiB), and only the rule model's tool arguments, which
  repeat a word of the prompt for every property, can grow an answer that far.

So the store holds at most capacity × ENTRY_SIZE characters (about 21 G at the default capacity; CPython keeps
a string in 1 to 4 bytes a character) plus a fixed overhead for each of at most capacity × HISTORY_ITEMS message
objects. The entries of one chain share their message objects, and a suite's conversations take a few KiB each,
so the real footprint is far smaller.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_STORE_SIZE = 10_000
MAX_BODY_BYTES = 1 << 20
HISTORY_ITEMS = 256
ENTRY_SIZE = 2 << 20


@dataclass(frozen=True)
class Entry:
    """One stored response. `history` is its conversation as chat messages, this turn's input and output
    included; `root` is the id that began its chain; `serial` orders entries by creation."""

    body: bytes
    history: tuple[dict[str, Any], ...]
    root: str
    serial: int
    input_items: tuple[dict[str, Any], ...] = ()  # this turn's input, as `GET …/input_items` lists it


class ResponseStore:
    """A bounded LRU map from response id to Entry, safe to share between threads."""

    keeps_unstored = False  # whether it keeps a `store: false` response too (a WebSocket connection's memory does)

    def __init__(self, capacity: int = DEFAULT_STORE_SIZE) -> None:
        if capacity < 1:
            raise ValueError(f"the response store needs room for at least one response, not {capacity}")
        self.capacity = capacity
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._serials = itertools.count()
        self._lock = threading.Lock()

    def get(self, response_id: str) -> Entry | None:
        """The entry, now the most recently used; None when it was never stored or has been evicted."""
        with self._lock:
            entry = self._entries.get(response_id)
            if entry is not None:
                self._entries.move_to_end(response_id)
            return entry

    def add(self, response_id: str, body: bytes, history: Sequence[dict[str, Any]], root: str,
            input_items: Sequence[dict[str, Any]] = ()) -> None:
        """Keep `body`, `input_items` and as much of the end of `history` as the entry's budget allows; a body and
        input over the budget alone are not kept."""
        budget = ENTRY_SIZE - len(body) - len(json.dumps(list(input_items), ensure_ascii=False))
        if budget < 0:
            return
        kept: list[dict[str, Any]] = []
        for message in reversed(history[-HISTORY_ITEMS:]):
            budget -= len(json.dumps(message, ensure_ascii=False))
            if budget < 0:
                break
            kept.append(message)
        with self._lock:
            self._entries[response_id] = Entry(body, tuple(reversed(kept)), root, next(self._serials),
                                               tuple(input_items))
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def delete(self, response_id: str) -> bool:
        """Forget the entry; whether there was one."""
        with self._lock:
            return self._entries.pop(response_id, None) is not None

    def newest_of_chain(self, entry: Entry) -> Entry:
        """The most recently created entry of `entry`'s chain: `entry` itself or a later turn from the same root.
        A scan: only a fault asks for it."""
        with self._lock:
            chain = [other for other in self._entries.values() if other.root == entry.root]
        return max([entry, *chain], key=lambda other: other.serial)


def store_of(request: Any, door: str) -> ResponseStore:
    """The store a door keeps its conversations in: one per door and server, made on its first request (each door
    its own, as LM Studio keeps its native chats apart from /v1/responses)."""
    state = request.app.state
    if door not in state.stores:
        state.stores[door] = ResponseStore(state.store_size)
    return state.stores[door]
