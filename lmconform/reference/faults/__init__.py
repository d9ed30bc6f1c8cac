"""The fault catalogue: each fault reproduces one real-world defect, and changes nothing else. One registry holds the
faults of every transport: the reference server's, over HTTP, and the reference VS Code bridge's, over stdio (declared
in the folder of the API spoken over stdio, read by lmconform.bridge.faults). `FAULTS` (read from here) holds the
reference server's, in catalogue order: the faults of each API of the table, in the table's order, as its
`reference/faults` module declares them (the defects, those of docs/coverage.md, the variants — valid forms real
servers send differently from OpenAI, which no check may report above INFO —, those that change one member of one
kind of object, and those only generated requests reach), then those of the server as a whole (server.py), of
the transport under every answer (transport.py) and of the doors' shared refusal of what the request schemas forbid
(lmconform/reference/refusal.py).

A check proves itself against the catalogue: it passes on the clean server and fails on exactly the faults
about its defect. That only works if a fault is narrow, so each one names a single deviation from what LM
Studio sends; the checks it makes fail are measured, not declared: `make catalogue` records them in
fixtures/catalogue.toml, which the project's tests hold each fault to.

The catalogue is gathered when first read, not when this package is imported: an API's stages and faults modules
import the registry below it, and must not find themselves half-imported by a catalogue gathered meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable

from lmconform.api_table import APIS, HTTP
from lmconform.command_line import unknown_name
from lmconform.reference.faults import registry
from lmconform.reference.faults.registry import Fault, Stage, apply


def registered() -> dict[str, Fault]:
    """Every fault of every transport: each API's faults module (and the server's own) imported, so registered,
    first."""
    for api in APIS.values():
        api.room("reference.faults")
    from lmconform.reference import refusal  # noqa: F401  (its flag: the schemas' bounds ignored)
    from lmconform.reference.faults import server, transport  # noqa: F401  (registration)

    return registry.FAULTS


def catalogue(transport: str = HTTP) -> dict[str, Fault]:
    """The faults of one transport, in catalogue order: the reference server's (HTTP), by default; the reference
    VS Code bridge's (STDIO) are in the same registry, declared in the folder of the API spoken over stdio."""
    if transport == HTTP:
        registered()
    else:  # only the folders of the APIs reached so: the reference bridge starts without the server's faults
        for api in APIS.values():
            if api.transport == transport:
                api.room("reference.faults")
    return {name: fault for name, fault in registry.FAULTS.items() if fault.transport == transport}


def parse_faults(names: Iterable[str]) -> frozenset[str]:
    """The faults named, each checked against the whole catalogue; ValueError for an unknown name."""
    chosen, known = frozenset(names), catalogue()
    for name in sorted(chosen):
        if name not in known:
            raise ValueError(unknown_name("fault", name, known, "`lmconform faults`"))
    return chosen


def __getattr__(name: str) -> dict[str, Fault]:
    if name == "FAULTS":
        return catalogue()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FAULTS", "Fault", "Stage", "apply", "catalogue", "parse_faults"]
