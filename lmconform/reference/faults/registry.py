"""The registry of faults.

A fault is declared once, by the API whose door serves it. Which checks it makes fail is not declared: `make
catalogue` runs the suite against the server with each fault and writes the fault × check table
(fixtures/catalogue.toml), which the project's tests compare with new runs; a check names the faults that prove it
(its `proven_by`). Most faults are a small function over one
`Stage` of the clean answer: the endpoints call `apply` once per stage, and each chosen fault of that stage
transforms the value in turn, in catalogue order. A fault that changes what the server does rather than what it
renders (a chain it does not follow, a rule its validation adds) is a `flag` the endpoint asks about by name.

Within `changes_traced()`, `apply` also tries on a copy of each stage's value every fault of that stage that is not
on and changes only answers (`Fault.traced`), and gathers those that change it: the faults that would change this
answer (lmconform.reference.app adds the flags a door asked about). A fault's run need then not play a case whose
clean answers no such fault changes (tools/catalogue.py). The doors apply every
stage of an answer before they return it, so that the trace is whole when the answer's headers are written.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from starlette.responses import Response

from lmconform.api_entry import HTTP as HTTP_TRANSPORT
from lmconform.api_table import APIS

Value = TypeVar("Value")
# What a fault may break besides an API of the table: the HTTP framing (status, content type, SSE bytes, timing).
HTTP = "http"


class Stage:
    """A value in the making of an answer that faults transform. Each API declares the stages of its answers (its
    `reference/stages.py`) and applies each at one place of its door; a fault names the stage it acts on."""

    def __init__(self, what: str, in_answer: bool = True) -> None:
        self.what = what
        self.faults: list[Fault] = []  # those registered for this stage, in catalogue order
        # Whether all a fault of it does shows in the answer's status, headers and bytes: not so for the bytes of a
        # stream as they are sent (when each arrives is part of it), nor for the transport under every answer.
        self.in_answer = in_answer

    def __repr__(self) -> str:
        return f"Stage({self.what!r})"


@dataclass(frozen=True)
class Fault:
    """One defect. `api` is what it breaks: an API of the table (lmconform.api_table: its validation, its stored
    conversations, the JSON it answers with) or "http" (status, content type, SSE framing or timing of the response
    rather than the JSON it carries).

    `transform` changes the value of `stage`; a flag has neither.

    A `variant` is no defect: a form real servers legitimately send differently from OpenAI (a `timings` key, a
    keep-alive comment). It is served like a fault so that the suite can be run against it, and its findings may
    only be INFO-level checks: anything more is a false alarm of a check."""

    name: str
    api: str
    summary: str
    seen_in: str
    stage: Stage | None = None
    transform: Callable[..., Any] | None = None
    variant: bool = False
    # No written or recorded case reaches it, only generated requests (an unknown role, a tool name too long…).
    generated_only: bool = False
    # What it does to a request depends on the requests before it (a request refused the first time it is seen): the
    # findings of a run follow from the whole run's cases, in its order, not from each case alone.
    stateful: bool = False
    # Checks it leaves without a verdict, by design (a bridge that dies: ERROR; no echo line to read: UNSUPPORTED).
    no_verdict: frozenset[str] = frozenset()
    # Shown only when the bridge's agent fails (the openai agent in front of an endpoint that refuses connections).
    needs_failing_agent: bool = False

    @property
    def transport(self) -> str:
        """How what it breaks is reached: over HTTP (the reference server's faults, "http" ones included) or over a
        process's stdio (the reference VS Code bridge's, the API its folder declares)."""
        return APIS[self.api].transport if self.api in APIS else HTTP_TRANSPORT

    @property
    def traced(self) -> bool:
        """Whether the clean server's trace (changes_traced) names it wherever it would change an answer: a flag, which
        acts only where a door asks about it, or a fault of a stage that shows whole in the answer that keeps no state
        across requests; either reached by written cases."""
        if self.generated_only:
            return False
        return self.stage is None or (self.stage.in_answer and not self.stateful)
    module: str = ""  # the module that declared it: where it stands in the catalogue's order


# Every fault declared so far, in catalogue order: the APIs in the order of their table, each API's faults in the
# order its faults module declares them, then those of the server as a whole. Importing lmconform.reference.faults
# declares them all.
FAULTS: dict[str, Fault] = {}


def fault(name: str, stage: Stage, *, summary: str, seen_in: str, api: str | None = None,
          stateful: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as fault `name`, applied to the value of `stage`. Its API is its folder's
    (`lmconform/apis/<api>/`), unless `api` says otherwise ("http": the framing under every API's answers)."""
    def register(transform: Callable[..., Any]) -> Callable[..., Any]:
        module = transform.__module__
        _add(Fault(name, api or folder_api(module, name), summary, seen_in, stage, transform, module=module,
                   stateful=stateful))
        return transform

    return register


def variant(name: str, stage: Stage, *, summary: str, seen_in: str,
            api: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as variant `name`: a valid form, applied to the value of `stage`."""
    def register(transform: Callable[..., Any]) -> Callable[..., Any]:
        module = transform.__module__
        _add(Fault(name, api or folder_api(module, name), f"variant: {summary}", seen_in, stage, transform,
                   variant=True, module=module))
        return transform

    return register


def flag(name: str, *, summary: str, seen_in: str, api: str | None = None, generated_only: bool = False,
         no_verdict: frozenset[str] = frozenset(), needs_failing_agent: bool = False, variant: bool = False) -> str:
    """Register fault `name` as a flag, which an endpoint (or the reference bridge) tests with `name in faults`;
    returns the name. With `variant`, what the flag changes is a valid form (a limit the server states), no
    defect."""
    module = sys._getframe(1).f_globals.get("__name__", "")
    _add(Fault(name, api or folder_api(module, name), f"variant: {summary}" if variant else summary, seen_in,
               generated_only=generated_only, module=module, no_verdict=no_verdict,
               needs_failing_agent=needs_failing_agent, variant=variant))
    return name


def folder_api(module: str, name: str) -> str:
    """The API whose folder declares a fault (`lmconform.apis.chat.reference.faults` → `chat`)."""
    parts = module.split(".")
    if parts[:2] != ["lmconform", "apis"] or len(parts) < 3:
        raise ValueError(f"fault {name!r} is declared outside an API's folder: name what it breaks (api=...)")
    return parts[2]


def _catalogue_position(declared: Fault) -> int:
    """Where a fault's API stands in the table (a module of `lmconform/apis/<api>/`); past them all, a fault of the
    server as a whole."""
    parts = declared.module.split(".")
    order = list(APIS)
    return order.index(parts[2]) if parts[:2] == ["lmconform", "apis"] and parts[2] in order else len(order)


def _add(declared: Fault) -> None:
    if declared.name in FAULTS:
        raise ValueError(f"fault {declared.name!r} is registered twice")
    if declared.api not in (*APIS, HTTP):
        raise ValueError(f"fault {declared.name!r}: api is one of {', '.join((*APIS, HTTP))}")
    # The APIs' faults modules may be imported in any order (a door imports its own first): the catalogue keeps the
    # table's order whatever it was.
    ordered = sorted([*FAULTS.values(), declared], key=_catalogue_position)
    FAULTS.clear()
    FAULTS.update((fault.name, fault) for fault in ordered)
    if declared.stage is not None:
        declared.stage.faults.append(declared)


_CHANGING: ContextVar[set[str] | None] = ContextVar("changing", default=None)


@contextmanager
def changes_traced() -> Iterator[set[str]]:
    """The names of the stages' faults that would change the answer made within (module docstring)."""
    changing: set[str] = set()
    token = _CHANGING.set(changing)
    try:
        yield changing
    finally:
        _CHANGING.reset(token)


def _would_change(declared: Fault, value: Any, context: tuple[Any, ...]) -> bool:
    assert declared.transform is not None
    try:
        changed = declared.transform(copy.deepcopy(value), *copy.deepcopy(context))
        return not _same(changed, value)
    except Exception:  # a value it cannot copy, or a transform that fails on a copy: it may well change it
        return True


def _same(one: Any, other: Any) -> bool:
    if isinstance(one, Response) or isinstance(other, Response):  # no equality of their own: what they send
        return (type(one) is type(other) and hasattr(one, "body") and one.status_code == other.status_code
                and one.raw_headers == other.raw_headers and one.body == other.body)
    if isinstance(one, Iterator) or isinstance(other, Iterator):  # what it yields is not known without using it up
        return False
    return bool(one == other)


def apply(stage: Stage, faults: frozenset[str], value: Value, *context: Any) -> Value:
    """`value` as each of `faults` registered for `stage` changes it, in catalogue order; `context` is what the
    stage's functions take besides the value."""
    changing = _CHANGING.get()
    if changing is not None:
        for declared in stage.faults:
            if declared.traced and declared.name not in faults and declared.name not in changing \
                    and _would_change(declared, value, context):
                changing.add(declared.name)
    for declared in stage.faults:
        if declared.name in faults and declared.transform is not None:  # a stage's faults all transform
            value = declared.transform(value, *context)
    return value
