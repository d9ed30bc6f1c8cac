"""Timing helpers shared by the benchmarks: ratios of two sides measured in the same run, best of several rounds."""

from __future__ import annotations

import time


def timed(function, *args) -> tuple[float, object]:
    started = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - started, result


def fastest(rounds: int, *functions) -> list[tuple[float, object]]:
    """The best of several runs of each (function, *args): one run swings by 10-20% with whatever else the machine
    does, which would drown the ratio. The runs alternate so that a busy spell slows both sides alike, and a run's
    result is dropped before the next so that no side is timed against a heap still holding the last run's data."""
    best, results = [float("inf")] * len(functions), [None] * len(functions)
    for _ in range(rounds):
        for i, (function, *args) in enumerate(functions):
            results[i] = None
            elapsed, results[i] = timed(function, *args)
            best[i] = min(best[i], elapsed)
    return list(zip(best, results))
