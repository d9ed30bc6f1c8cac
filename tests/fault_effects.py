"""What each fault is shown to do, decided by the fault itself rather than by where it is declared.

Every fault of every transport whose catalogue row names findings gets its effect test from the registry
(tests/test_fault_effects.py): the checks it proves, played on the one case its row says they show on, fail under
the fault and pass on the clean server. A fault no check fails (a variant: a legal form no check may report; the
stall, which leaves no verdict) shows its effect on the wire instead, in a test written for it and registered here
under its name (`FaultEffects.of`); a test module may register such wire-level tests for other faults too."""

from __future__ import annotations

from collections.abc import Callable

from lmconform.checks import REGISTRY
from lmconform.reference.faults import registered
from tools.catalogue import load

EffectTest = Callable[..., None]
TABLE = load()
# Every table of written effect tests, as its module registers it.
WRITTEN: list[FaultEffects] = []


class FaultEffects(dict[str, EffectTest]):
    def __init__(self) -> None:
        super().__init__()
        WRITTEN.append(self)

    def of(self, name: str) -> Callable[[EffectTest], EffectTest]:
        """Register the decorated function as the effect test of fault `name`."""
        def register(test: EffectTest) -> EffectTest:
            self[name] = test
            return test

        return register


def proven_checks(fault: str) -> list[str]:
    """The checks a fault is shown to fail: those that name it as their proof (`proven_by`) among those its row
    finds, else every check its row finds (a fault that proves no check of its own, only a break others prove)."""
    found = TABLE.row(fault).findings
    named = sorted(check for check in found if fault in REGISTRY[check].proven_by)
    return named or sorted(found)


def faults_with_findings() -> list[str]:
    """Every fault of every transport whose row names findings: each has its effect test from the registry."""
    return [name for name in registered() if TABLE.row(name).findings]


def faults_without_findings() -> list[str]:
    """The faults no check fails: each needs an effect test written for it."""
    return [name for name in registered() if not TABLE.row(name).findings]
