"""Pausing Python's cyclic garbage collector while a long answer is read.

Reading an answer of many events allocates objects that all stay alive (events, decoded payloads, normalised
chunks), and those allocations trigger the collector again and again, each time traversing everything the reading
has kept so far: a reading whose work grows with the answer then spends time that grows faster than the answer, in
pauses of a tenth of a second at random places. Nothing a reading keeps forms a cycle worth finding before it ends,
so the collector is paused for it and sees the survivors once afterwards. Garbage without cycles is still freed at
once by reference counting.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_frozen = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector paused for the block, if it was running (a pause inside a pause leaves it to the outer one)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def freeze_long_lived() -> None:
    """Set what the process holds when its first run starts (imported modules: the openai SDK's models, hypothesis,
    the compiled schemas) outside the collector's sight, once per process. Those objects live as long as the
    process, and every full collection of a run would otherwise traverse them all again: a seventh of the time of a
    run of generated requests went to two such collections. Garbage is collected first, so none is kept for good."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()
