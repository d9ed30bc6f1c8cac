"""The reference bridge's faults: those of the one fault registry reached over stdio, declared in the folder of the
API spoken over stdio (the table's entry says which), and parsed from a command line here."""

from __future__ import annotations

from collections.abc import Iterable

from lmconform.api_entry import STDIO
from lmconform.command_line import unknown_name
from lmconform.reference.faults import catalogue
from lmconform.reference.faults.registry import Fault

FAULTS: dict[str, Fault] = catalogue(STDIO)


def parse_faults(names: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(names)
    unknown = sorted(chosen - FAULTS.keys())
    if unknown:
        raise ValueError(unknown_name("bridge fault", unknown[0], FAULTS, "`lmconform bridge --list-faults`"))
    return chosen
