"""Hypothesis' draws, the same in every process that runs the same search with the same seed.

Since 6.131, Hypothesis sometimes draws a constant it found in the source of the modules the process has imported
from outside installed packages (at most one draw in twenty). Which modules those are differs between `pytest
suites` and `lmconform check`, between a checkout and an installed lmconform, and after any edit of lmconform's own
code: the same seed then sends other requests, and a finding cannot be reproduced from its seed, nor a real server's
expected verdicts kept. While lmconform draws, that pool is empty; Hypothesis' own constants (fixed by its version)
stay. The pool is Hypothesis' internal state, so a release without it leaves nothing to empty.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis.internal.conjecture import providers

# Searches in threads of one process overlap: the pool comes back when the last of them ends.
_lock = threading.Lock()
_depth = 0
_imported_constants = getattr(providers, "_get_local_constants", None)


def _no_imported_constants() -> providers.Constants:
    return providers.Constants()


@contextmanager
def independent_of_imports() -> Iterator[None]:
    """Within this block, Hypothesis draws nothing from the source of the modules the process imported."""
    global _depth
    if _imported_constants is None:
        yield
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            providers._get_local_constants = _no_imported_constants
            providers.CONSTANTS_CACHE.cache.clear()  # it holds the pool's constants by the kind of value drawn
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                providers._get_local_constants = _imported_constants
                providers.CONSTANTS_CACHE.cache.clear()
