"""Runs: cases played against a target and judged by checks (lmconform.run.run), assembled in one place
(lmconform.run.plan) for the pytest plugin, the tests' runner and the proxy gate."""

from lmconform.run.plan import RunPlan, run_requirements, run_suite
from lmconform.run.run import Run, TargetUnreachable, applies, discover, results_record

__all__ = ["Run", "RunPlan", "TargetUnreachable", "applies", "discover", "results_record", "run_requirements",
           "run_suite"]
