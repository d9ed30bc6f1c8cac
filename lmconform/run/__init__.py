"""Runs: cases played against a target and judged by checks (lmconform.run.run), without pytest or under it."""

from lmconform.run.results import write_json_atomically
from lmconform.run.run import Run, TargetUnreachable, discover
from lmconform.run.suite import applies, run_requirements, run_suite

__all__ = ["Run", "TargetUnreachable", "applies", "discover", "run_requirements", "run_suite", "write_json_atomically"]
