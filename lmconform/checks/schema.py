"""Every answer against the schema of its kind (lmconform.schemas): each JSON body and each event-stream payload of
every exchange of a case — its request's answer and the answers to its further turns, since a chained answer is as
much the target's as the first one, and the turns are played whatever checks run, so judging them costs no request.

The registry holds one level per check, and a schema grades each requirement on its own, so each kind of object has
a check per level its schemas use: `schema.chat.chunk.must` fails (FAILED) on what clients dereference,
`schema.chat.chunk.should` (NON-STRICT) on what the spec requires but clients survive without, and
`schema.chat.chunk.info` (INFO) on what is only worth knowing (nullable members left out, echoes of the request). A
finding is one (JSON pointer, keyword), however many payloads show it, with how many do.

Which answers each kind judges: a chat completion, a Responses object, an Anthropic message, a native chat result
and the model list are the 2xx JSON bodies of the requests that ask for them (a streamed answer's payloads are chunks
and events, each event told apart by `type` validated by the schema of its type); error bodies are judged where
the case expects a refusal (an invalid request, a turn with an unknown previous_response_id). A valid request that
is refused is http.status.success_for_valid_request's finding already; its body is not judged again here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial

from lmconform.api_table import api_of
from lmconform.cases import FIRST, Case
from lmconform.cases.model import PLACEHOLDER
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_ERRORS
from lmconform.checks.registry import check
from lmconform.checks.scope import refusal_expected
from lmconform.schemas import PAYLOAD_SCHEMAS, SchemaFinding, event_schemas, validate
from lmconform.vocabulary import Failure, Level, NotApplicable
from lmconform.wire.http import HttpExchange

EXCERPT_CHARS = 300


@dataclass(frozen=True)
class SchemaObject:
    """A kind of payload the schemas judge: where it is found and at which levels its schemas grade."""

    id: str  # `chat.chunk`: the middle of its checks' ids
    kind: str  # "body", "event" or "error" (lmconform.schemas.KINDS)
    nouns: tuple[str, str]  # what payloads are called in a finding: ("chunk", "chunks")
    subject: str  # what the titles say is judged
    applies: Callable[[Case], bool]
    ref: str
    # A check per level its schemas grade, each with the faults that prove it (the registry's `proven_by`).
    proven_by: dict[Level, tuple[str, ...]]

    @property
    def levels(self) -> tuple[Level, ...]:
        return tuple(self.proven_by)


BODIES = ("body", "bodies")
EVENTS = ("event", "events")
TITLES = {
    Level.MUST: "{subject} has what clients dereference, of the JSON type they read",
    Level.SHOULD: "{subject} has what the spec requires and clients survive without",
    Level.INFO: "{subject} has the spec's nullable, optional and echoed members",
}


@dataclass(frozen=True)
class Judged:
    """One payload of an answer and what its schema said of it."""

    kind: str
    event: int | None  # the payload's SSE event, by its index; None: the body
    type: str | None  # the type of an event told apart by `type`
    findings: tuple[SchemaFinding, ...]

    def shown(self, exchange: HttpExchange) -> str:
        """Where the payload is and how it begins, for a finding's evidence: made for the payload a finding shows,
        not for every payload judged."""
        if self.event is None:
            return f"body: {exchange.body_excerpt(EXCERPT_CHARS)}"
        event = exchange.sse.events[self.event]
        return f"{event.label()}{f' [{self.type}]' if self.type else ''}: {event.excerpt(EXCERPT_CHARS)}"


@cache
def reading(api: str, profile: str | None) -> Callable[[HttpExchange], list[Judged]]:
    """The validation of an exchange of `api` under `profile`, as a reading `Exchange.view` keeps: each answer is
    validated once however many checks of however many levels ask."""
    def judged(exchange: HttpExchange) -> list[Judged]:
        return list(_judged(exchange, api, profile))

    return judged


def _judged(exchange: HttpExchange, api: str, profile: str | None) -> Iterator[Judged]:
    status = exchange.status
    if exchange.error or status is None:
        return
    if status >= 400 or (200 <= status < 300 and not exchange.is_event_stream):
        kind = "error" if status >= 400 else "body"
        if isinstance(exchange.json, dict | list) and (api, kind) in PAYLOAD_SCHEMAS:
            yield Judged(kind, None, None, tuple(validate(api, kind, exchange.json, profile)))
    elif 200 <= status < 300 and (api, "event") in PAYLOAD_SCHEMAS:
        # Payloads that are not JSON are sse.framing.data_is_json's; [DONE] is no payload.
        for position, payload in enumerate(exchange.payloads):
            if not isinstance(payload, dict | list):
                continue
            kind_of = payload.get("type") if isinstance(payload, dict) and event_schemas(api) else None
            yield Judged("event", position, kind_of if isinstance(kind_of, str) else None,
                         tuple(validate(api, "event", payload, profile)))


def api_object_exchanges(observed: Observed) -> Iterator[tuple[str, HttpExchange]]:
    """The answers that are the API's objects: the request's, and each turn's that sent the same kind of request or
    read a stored answer back (not what a deletion or a list of input items answers)."""
    yield FIRST, observed.exchange
    stored = api_of(observed.case.api).stored_path
    for name, played in observed.turns.items():
        path = getattr(played.turn, "path", None)
        same_kind = path is None or (played.turn.method == "GET" and stored is not None
                                     and PLACEHOLDER.sub("{}", path) == re.sub(r"\{\w+\}", "{}", stored))
        if played.exchange is not None and same_kind:
            yield name, played.exchange


def judge(observed: Observed, object_: SchemaObject, level: Level) -> Iterator[Failure]:
    read = reading(observed.case.api, observed.target.profile)
    seen = 0
    found: dict[tuple[str, str], list[tuple[str, HttpExchange, Judged, SchemaFinding]]] = {}
    answers = 0
    for name, exchange in api_object_exchanges(observed):
        judged = [payload for payload in exchange.view(read) if payload.kind == object_.kind]
        answers += bool(judged)
        seen += len(judged)
        for payload in judged:
            for finding in payload.findings:
                if finding.level is level:
                    found.setdefault(finding.key, []).append((name, exchange, payload, finding))
    if not seen:
        raise NotApplicable(f"no {object_.nouns[0]} to judge in the answers")
    for hits in found.values():
        yield _failure(hits, seen, answers, object_.nouns)


def _failure(hits: list, seen: int, answers: int, nouns: tuple[str, str]) -> Failure:
    name, exchange, payload, finding = hits[0]
    where = f"`{finding.pointer}`" if finding.pointer else "the whole payload"
    expected = f"{where}: {finding.expected} (keyword `{finding.keyword}` at {finding.schema})"
    if finding.note:
        expected += f" — {finding.note}"
    actual = f"{finding.actual}, in {len(hits)} of {seen} {nouns[seen != 1]}"
    actual += f" of {answers} answers" if answers > 1 else ""
    types = sorted({payload.type for _, _, payload, _ in hits if payload.type})
    if types:
        actual += f" ({', '.join(types)})"
    evidence = payload.shown(exchange)
    if name != FIRST:
        evidence = f"answer to the turn {name!r}, {evidence}\nReproduce the turn: {exchange.request.reproduction()}"
    return Failure(expected, actual, evidence)


OBJECTS: list[SchemaObject] = []  # every kind of object judged, as registered


def register(object_: SchemaObject) -> None:
    """A check of `object_` per level its schemas use: `schema.<object id>.<level>`."""
    OBJECTS.append(object_)
    for level in object_.levels:
        check(f"schema.{object_.id}.{level.lower()}", level=level, applies=object_.applies, ref=object_.ref,
              title=TITLES[level].format(subject=object_.subject),
              proven_by=object_.proven_by[level])(partial(judge, object_=object_, level=level))


# Each API's folder registers the objects of its own schemas (its checks/schema.py); an error body is judged in the
# form of its API, by the one check of every API.
register(SchemaObject("errors.body", "error", ("error body", "error bodies"),
                      "an error body, in the form of its API (OpenAI's, Anthropic's, LM Studio's)", refusal_expected,
                      OPENAI_ERRORS, {Level.MUST: ("error-message-missing",), Level.SHOULD: ("error-type-missing",),
                                      Level.INFO: ("error-param-missing",)}))
