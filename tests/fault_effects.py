"""A registry of per-fault effect tests: each reference-server test module registers, under a fault's name, the
test that shows the fault changes what it names, then asserts that every fault of its API has one."""

from __future__ import annotations

from collections.abc import Callable

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


def faults_of_kind(kind: str, apis: tuple[str, ...] | None = None) -> list[str]:
    """The faults the modules of one kind declare (`defects`, `coverage`, `variants`, `schema`, `generated`: the
    module of that name in an API's `reference/faults/`), of every API or of `apis`, in catalogue order; each kind's
    tests show their effects."""
    found = []
    for name, fault in FAULTS.items():
        parts = fault.module.split(".")
        if parts[:2] == ["lmconform", "apis"] and parts[-1] == kind and (apis is None or parts[2] in apis):
            found.append(name)
    return found
