"""The registry of faults.

A fault is declared once, with the checks it makes fail beside it. Most faults are a small function over one
`Stage` of the clean answer: the endpoints call `apply` once per stage, and each chosen fault of that stage
transforms the value in turn, in catalogue order. A fault that changes what the server does rather than what it
renders (a chain it does not follow, a rule its validation adds) is a `flag` the endpoint asks about by name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

APIS = ("chat", "responses", "messages", "native_chat", "models", "http")

Value = TypeVar("Value")


class Stage(Enum):
    """A value in the making of an answer that faults transform; each is applied at one place."""

    CHAT_REQUEST = "the chat request body as parsed, before validation"
    CHAT_REFUSAL = "the 400 response to an invalid chat request"
    CHAT_PLAN = "the model's Plan, before its tokens are counted"
    CHAT_CONTEXT_OVERFLOW = "the 400 response to a chat request whose prompt does not fit the context"
    CHAT_TOOL_CALLS = "the message's tool_calls entries, which the stream cuts into deltas"
    CHAT_TOOL_CALL_DELTAS = "the streamed tool_calls entries of each call, its opening delta first"
    CHAT_OBJECT = "each chunk of a stream, or the non-stream body, as the server renders it"
    CHAT_BODY = "the non-stream chat.completion body, as returned"
    CHAT_STREAM = "what the data lines of a stream carry: chunk objects, then the string [DONE]"
    CHAT_SSE = "the bytes of a stream as they are sent, an event at a time; also given the server's stopping Event"
    MODELS_LIST = "the model entries GET /v1/models lists"
    MODELS_REPLY = "the response to GET /v1/models"
    RESPONSES_REQUEST = "the Responses request body as parsed, before validation"
    RESPONSES_ERROR = "the error object of a refused Responses request"
    RESPONSES_REFUSAL = "the error response to a Responses request that was refused"
    RESPONSES_OBJECT = "the response object, as it is returned, stored and streamed"
    RESPONSES_BODY = "the response object as the non-stream body sends it (not as it is stored or streamed)"
    RESPONSES_EVENTS = "the events of a stream in order, before they are numbered"
    RESPONSES_FRAMES = "the numbered events, each with the name its SSE `event:` line gives it"
    MESSAGES_REQUEST = "the Messages request body as parsed, before validation"
    MESSAGES_REFUSAL = "the error response to a Messages request the server refuses"
    MESSAGES_OBJECT = "the message object, as it is returned and streamed"
    MESSAGES_BODY = "the message object as the non-stream answer returns it"
    MESSAGES_EVENTS = "the events of a Messages stream in order"
    MESSAGES_FRAMES = "the events of a Messages stream, each with the name its SSE `event:` line gives it (or None)"
    NATIVE_REQUEST = "the native chat request body as parsed, before validation"
    NATIVE_RESULT = "the native chat result, as it is returned and carried by chat.end"
    NATIVE_EVENTS = "the events of a native chat stream in order"
    NATIVE_FRAMES = "the events of a native chat stream, each with the name its SSE `event:` line gives it"
    RESPONSES_SSE = "the bytes of each event of a stream, in order"


@dataclass(frozen=True)
class Fault:
    """One defect. `api` is what it breaks: "chat" (chat completion content), "responses" (the Responses API:
    its validation, its stored conversations and its event stream), "messages" (Anthropic's Messages API),
    "native_chat" (LM Studio's own /api/v1/chat), "models" (the model list) or "http" (status, content type, SSE
    framing or timing of the response rather than the JSON it carries).

    `findings` are the checks that fail when the whole suite runs against the reference server with this fault;
    `proxy_findings` those that fail in differential mode, the clean server being the upstream and the server
    with this fault the proxy; `agent_findings` the agent checks that fail, and pass on the clean server, when the
    coding agent of the fault's API does its task against it (tests/test_agents.py runs it; docs/agents.md shows
    every fault against every agent). `transform` changes the value of `stage`; a flag has neither.

    A `variant` is no defect: a form real servers legitimately send differently from OpenAI (a `timings` key, a
    keep-alive comment). It is served like a fault so that the suite can be run against it, and its findings may
    only be INFO-level checks: anything more is a false alarm of a check."""

    name: str
    api: str
    summary: str
    seen_in: str
    findings: frozenset[str]
    proxy_findings: frozenset[str] = frozenset()
    stage: Stage | None = None
    transform: Callable[..., Any] | None = None
    variant: bool = False
    module: str = ""  # the module that declared it: its effect tests live beside that module's others
    agent_findings: frozenset[str] = frozenset()


FAULTS: dict[str, Fault] = {}
_BY_STAGE: dict[Stage, list[Fault]] = {stage: [] for stage in Stage}


def fault(name: str, stage: Stage, *, api: str, summary: str, seen_in: str, findings: Iterable[str],
          proxy_findings: Iterable[str] = (), agent_findings: Iterable[str] = ()
          ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as fault `name`, applied to the value of `stage`."""
    def register(transform: Callable[..., Any]) -> Callable[..., Any]:
        _add(Fault(name, api, summary, seen_in, frozenset(findings), frozenset(proxy_findings), stage, transform,
                   module=transform.__module__, agent_findings=frozenset(agent_findings)))
        return transform

    return register


def variant(name: str, stage: Stage, *, api: str, summary: str, seen_in: str,
            findings: Iterable[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as variant `name`: a valid form, applied to the value of `stage`."""
    def register(transform: Callable[..., Any]) -> Callable[..., Any]:
        _add(Fault(name, api, f"variant: {summary}", seen_in, frozenset(findings), frozenset(), stage, transform,
                   variant=True, module=transform.__module__))
        return transform

    return register


def flag(name: str, *, api: str, summary: str, seen_in: str, findings: Iterable[str],
         proxy_findings: Iterable[str] = (), agent_findings: Iterable[str] = ()) -> str:
    """Register fault `name` as a flag, which an endpoint tests with `name in faults`; returns the name."""
    module = sys._getframe(1).f_globals.get("__name__", "")
    _add(Fault(name, api, summary, seen_in, frozenset(findings), frozenset(proxy_findings), module=module,
               agent_findings=frozenset(agent_findings)))
    return name


def _add(declared: Fault) -> None:
    if declared.name in FAULTS:
        raise ValueError(f"fault {declared.name!r} is registered twice")
    if declared.api not in APIS:
        raise ValueError(f"fault {declared.name!r}: api is one of {', '.join(APIS)}")
    FAULTS[declared.name] = declared
    if declared.stage is not None:
        _BY_STAGE[declared.stage].append(declared)


def apply(stage: Stage, faults: frozenset[str], value: Value, *context: Any) -> Value:
    """`value` as each of `faults` registered for `stage` changes it, in catalogue order; `context` is what the
    stage's functions take besides the value."""
    for declared in _BY_STAGE[stage]:
        if declared.name in faults:
            value = declared.transform(value, *context)
    return value


def parse_faults(names: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(names)
    for name in sorted(chosen):
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULTS)}")
    return chosen
