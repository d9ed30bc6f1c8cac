"""What the options of lmconform's commands share: a number within bounds, or argparse's one-line usage error
(exit status 2) naming the option, rather than a traceback when the number reaches what cannot take it (a port
above 65535 reaching bind())."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def bounded(kind: type[int] | type[float], low: float, high: float = sys.maxsize) -> Callable[[str], float]:
    """An argparse `type`: a number of `kind` from `low` to `high` (no upper bound when none is given)."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:  # NaN fails both comparisons
            whole = "a whole number" if kind is int else "a number"
            bound = f"of at least {low:g}" if high == sys.maxsize else f"from {low:g} to {high:g}"
            raise argparse.ArgumentTypeError(f"takes {whole} {bound}, not {text!r}")
        return value
    return parse


PORT = bounded(int, 0, 65535)
