"""What a check looks at: one case's exchanges with a target (its request, its further turns, the same request sent
to an upstream), and the views derived from them. Everything here was sent before any check ran: checks only read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import wraps
from typing import Any, Generic, Self

from typing_extensions import TypeVar

from lmconform.agents.outcome import AgentRun
from lmconform.cases import FIRST, Case, HttpTurn, Turn
from lmconform.normalize.events import Generation, ToolCall
from lmconform.normalize.reading import reading
from lmconform.target import Target
from lmconform.vocabulary import Failure, NotApplicable, Unsupported
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpExchange

# What a case was played on: the exchanges of its API's transport (an HttpExchange, a StdioExchange for a bridge, a
# WebSocketExchange for the Responses API's WebSocket mode) and the turns of its cases (an HttpTurn, a StdioTurn). A
# check of one API names them (`Observed[StdioExchange, StdioTurn]`); a bare `Observed` is one over HTTP. Covariant,
# so that one over HTTP is also an AnyObserved, as the run holds it: nothing replaces an observation's exchanges once
# it is played (checks only read), which is what makes that sound.
ExchangeT = TypeVar("ExchangeT", bound=Exchange, default=HttpExchange, covariant=True)
TurnT = TypeVar("TurnT", bound=Turn, default=HttpTurn, covariant=True)
ObservedT = TypeVar("ObservedT", bound="Observed[Any, Any]")


def generation_of(api: str, exchange: Exchange) -> Generation:
    """Any exchange of `api` in the generation vocabulary, from whichever form actually arrived."""
    normaliser = reading(api).generation
    if normaliser is None:
        raise NotApplicable(f"the {api} API answers with no generation")
    return normaliser(exchange)


def output_cap(request: Any, field: str) -> int | None:
    """The output cap the request was sent with (the case's own, or the one --max-tokens filled in)."""
    cap = request.get(field) if isinstance(request, dict) else None
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else None


@dataclass(frozen=True)
class PlayedTurn(Generic[TurnT, ExchangeT]):
    """A further turn of a case as the run played it: its exchange, or why it could not be sent."""

    turn: TurnT
    exchange: ExchangeT | None
    skipped: str | None = None


@dataclass
class Observed(Generic[ExchangeT, TurnT]):
    case: Case
    target: Target
    exchange: ExchangeT
    turns: dict[str, PlayedTurn[TurnT, ExchangeT]] = field(default_factory=dict)  # by name, in the order played
    feature_missing: bool = False  # the target lacks the optional feature the case exercises
    upstream_exchange: HttpExchange | None = None  # the same request straight to --upstream
    upstream_target: Target | None = None
    # A pair's further answers (`"pair": "stream"`): the request in its other form ("streamed" or "body"), and the
    # unstreamed answer fetched by its id ("stored"), where the API's server keeps its answers.
    paired: dict[str, ExchangeT] = field(default_factory=dict)
    # For an example of a generated case: how it was generated and how to replay every request of it.
    example: str = ""
    # Verdicts already given on this observation, by check id: a generated example is judged once while it is
    # searched, and the run's verdict reuses that judgement.
    judged: dict = field(default_factory=dict, repr=False)
    play: int = 0  # which of the case's --repeat plays it belongs to
    # For a request a coding agent sent: the agent's run, and whether this is the run's last example (where the
    # checks of the whole run judge it).
    agent_run: AgentRun | None = None
    agent_final: bool = False
    unsupported: str | None = None  # why the target cannot be judged on the case at all (an agent not installed)

    @property
    def request_body(self) -> Any:
        return self.exchange.request.body

    @property
    def succeeded(self) -> bool:
        return self.exchange.succeeded

    def require_success(self) -> None:
        """Content checks have nothing to judge in a refusal; the status checks speak to that."""
        if not self.succeeded:
            raise NotApplicable(f"the answer was {self.exchange.status_text}")

    def reproduction(self) -> str:
        """Shell commands that send the case's request again: for a pair, its other forms after it (the streamed
        request or the body, and the GET of the stored answer), since its checks judge them together."""
        return "\n".join(exchange.request.reproduction() for exchange in [self.exchange, *self.paired.values()])

    def exchanges(self) -> list[Exchange]:
        """The case's request and every turn that was sent, in the order they were played."""
        return [self.exchange, *(played.exchange for played in self.turns.values() if played.exchange is not None),
                *self.paired.values()]

    def require_event_stream(self: Observed[HttpExchange, Any]) -> None:
        """A check of streams has nothing to judge in a refusal or in an answer that is not an event stream."""
        self.require_success()
        if not self.exchange.is_event_stream:
            raise NotApplicable(f"the answer is {self.exchange.content_type or 'untyped'}, not an event stream")

    def require_documented(self, feature: str) -> None:
        """A target held to a server version that documents it lacks `feature` (--profile lmstudio@0.3.14 and
        tool_choice "required", say) is UNSUPPORTED for it, not FAILED."""
        reason = self.target.profile_spec.lacks(feature, self.target.engine)
        if reason:
            raise Unsupported(reason)

    def require_tool_calls(self) -> list[ToolCall]:
        self.require_success()
        calls = self.generation.tool_calls()
        if not calls:
            raise NotApplicable("the answer calls no tool")
        return calls

    @property
    def generation(self) -> Generation:
        """The answer in the generation vocabulary, from whichever form actually arrived."""
        return generation_of(self.case.api, self.exchange)

    @property
    def secrets(self) -> tuple[str, ...]:
        return self.target.secrets + (self.upstream_target.secrets if self.upstream_target else ())

    @property
    def upstream(self) -> HttpExchange:
        """The same request sent straight to the upstream, for differential checks."""
        if self.upstream_exchange is None:
            raise NotApplicable("no --upstream to compare with")
        return self.upstream_exchange

    def pair(self) -> tuple[ExchangeT, ExchangeT]:
        """The answers of a pair, (streamed, body); a pair whose either answer is a refusal has nothing to compare."""
        if not self.case.pair:
            raise NotApplicable("the case is not a pair")
        other = self.paired.get("body") or self.paired.get("streamed")
        if other is None:
            raise NotApplicable("the pair's other form was not sent")
        streamed, body = (self.exchange, other) if self.case.streamed else (other, self.exchange)
        for exchange in (streamed, body):
            if not exchange.succeeded:
                raise NotApplicable(f"one of the pair was answered {exchange.status_text}")
            if exchange.error:
                raise NotApplicable(f"one of the pair did not arrive whole: {exchange.error}")
        return streamed, body

    def answers(self) -> list[tuple[str, Self]]:
        """Each answer the case's request got, as an observation of its own, for the checks that hold every form of
        the answer to one rule (a stop string left out, log probabilities given): the case's own answer and, for a
        pair, the request in its other form, each named by its form when there are two ("the stream", "the body")."""
        other = self.paired.get("body") or self.paired.get("streamed")
        if other is None:
            return [("", self)]
        own = "the stream" if self.case.streamed else "the body"
        return [(own, self), ("the body" if self.case.streamed else "the stream",
                              replace(self, exchange=other, paired={}, judged={}))]

    def answer_to(self, name: str) -> ExchangeT:
        """The exchange of the case's request (FIRST) or of one of its turns; a turn that could not be sent has
        nothing to judge."""
        if name == FIRST:
            return self.exchange
        played = self.turns[name]
        if played.exchange is None:
            raise NotApplicable(f"the turn {name!r} was not sent: {played.skipped}")
        return played.exchange


# An observation of whichever transport its case's API speaks: what the run plays and judges.
AnyObserved = Observed[Exchange, Turn]


def in_every_answer(judge: Callable[[ObservedT], Iterable[Failure]]) -> Callable[[ObservedT], Iterator[Failure]]:
    """A check of one answer made a check of every answer the request got (Observed.answers): a pair's stream and its
    body are each held to it, each failure naming the form it was found in, and the check has nothing to judge only
    when neither answer has."""

    @wraps(judge)
    def judged(observed: ObservedT) -> Iterator[Failure]:
        reasons, judged_any = [], False
        for form, answer in observed.answers():
            if answer.exchange.error:  # the case's own answer never gets here (lmconform.checks.evaluate)
                reasons.append(f"{form} did not arrive whole: {answer.exchange.error}")
                continue
            try:
                failures = list(judge(answer))
            except NotApplicable as reason:
                reasons.append(f"{form}: {reason}" if form else str(reason))
                continue
            judged_any = True
            for failure in failures:
                yield replace(failure, actual=f"in {form}, {failure.actual}") if form else failure
        if not judged_any:
            raise NotApplicable("; ".join(reasons))

    return judged
