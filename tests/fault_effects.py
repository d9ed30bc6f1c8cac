"""A registry of per-fault effect tests: each reference-server test module registers, under a fault's name, the
test that shows the fault changes what it names, then asserts that every fault of its API has one."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import httpx

from lmconform.reference.faults import FAULTS

EffectTest = Callable[[httpx.Client], None]


class FaultEffects(dict[str, EffectTest]):
    def of(self, name: str) -> Callable[[EffectTest], EffectTest]:
        """Register the decorated function as the effect test of fault `name`."""
        def register(test: EffectTest) -> EffectTest:
            self[name] = test
            return test

        return register


def faults_of_module(module: ModuleType) -> set[str]:
    """The faults a module of lmconform.reference.faults declares; each module's tests show their effects."""
    return {name for name, fault in FAULTS.items() if fault.transform is not None
            and fault.transform.__module__ == module.__name__}
