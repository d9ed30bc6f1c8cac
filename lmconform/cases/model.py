"""Cases: a request kept as data, and for an API that continues conversations the further turns built from it and
from the answers before them (a chain, a fork, a tool result). The run plays them all, in order; checks only read
what came back. A case may instead name a source of generated cases (`"source": "chains"`), whose examples the run
plays and judges the same way.

Over stdio (a VS Code language-model bridge) a turn is a further JSON-RPC message to the same process: a request of
any method, a notification (`lm/cancel`, sent once the request it cancels has streamed some parts), or a raw line;
a chat turn carries the whole history, built from the earlier request and its answer."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lmconform.api_table import api_of

FIRST = "request"  # how a turn names the case's own request
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9-]*)\}")  # in a turn's path: the id of that turn's answer


# The keys of a turn in a case file, in the order a written file gives them.
DOCUMENT_ORDER = ("name", "method", "path", "notification", "id", "previous", "compaction_of", "body", "raw_body",
                  "answers_call_of", "call_output", "recall", "reconnect", "cancels", "after_parts", "edited_answer")


@dataclass(frozen=True)
class Turn:
    """A further message of a case, on the case's transport: `body`'s fields instead of the request's own, following
    the turn named `previous` (FIRST: the case's request), and, with `answers_call_of`, answering the first call of
    that turn's answer with `call_output`. How a turn is sent is its transport's: HttpTurn, StdioTurn."""

    name: str
    body: dict = field(default_factory=dict)
    previous: str | None = None
    answers_call_of: str | None = None
    call_output: str | None = None

    def document(self) -> dict:
        """The turn as a case file holds it."""
        fields = {key: getattr(self, key, None) for key in DOCUMENT_ORDER}
        fields["notification"] = fields["notification"] or None
        fields["reconnect"] = fields["reconnect"] or None
        fields["body"] = fields["body"] or None
        return {key: value for key, value in fields.items() if value is not None}


@dataclass(frozen=True)
class HttpTurn(Turn):
    """A further request over HTTP: the case's request body with `body`'s fields instead of its own `input` and
    `previous_response_id`, chained to the answer of `previous` (the API's continuation builds it); or a request of
    another method to a path naming earlier answers (`GET /v1/responses/{request}`)."""

    recall: str | None = None  # a word its answer must contain (judged against the reference server only)
    # An earlier turn whose answer's output items open this turn's input: a compaction (`POST /v1/responses/compact`)
    # sent back in place of the history it stands for, as Codex does.
    compaction_of: str | None = None
    # Another request than the case's: its HTTP method (GET, DELETE), and its path, where `{name}` stands for the id
    # of that turn's answer (`/v1/responses/{request}/input_items`). A turn of another method than POST has no body.
    method: str | None = None
    path: str | None = None
    # In a case of the WebSocket mode (Case.websocket): sent on a new socket, the earlier one closed.
    reconnect: bool = False

    @property
    def named(self) -> tuple[str, ...]:
        """The turns whose answers' ids its path names."""
        return tuple(PLACEHOLDER.findall(self.path or ""))

    @property
    def input(self) -> Any:
        return self.body.get("input")

    @property
    def unknown_previous_id(self) -> str | None:
        """A previous_response_id written into the turn itself: an id no server issued."""
        given = self.body.get("previous_response_id")
        return given if isinstance(given, str) else None


@dataclass(frozen=True)
class StdioTurn(Turn):
    """A further JSON-RPC message to the same process: of the JSON-RPC method `method` (default: the API's), sent as
    a notification, with this id instead of the next number, or a raw line. `cancels` names the turn whose id its
    params carry as `requestId`, and `after_parts` how many parts that turn streams before this one is sent.
    `edited_answer` replaces the answer of `previous` in the history, as a user who edits it."""

    method: str | None = None
    notification: bool = False
    id: Any = None
    raw_body: str | None = None
    cancels: str | None = None
    after_parts: int | None = None
    edited_answer: str | None = None


TurnT = TypeVar("TurnT", bound=Turn)


# The words of a sibling turn: they must not reach any other child of the same parent.
SIBLING_INPUT = "An unrelated sibling turn whose words must not reach any other child of the same parent."


def chain_probe(follow_up: Any, recall: str | None = None) -> tuple[Turn, ...]:
    """The turns that show whether a server keeps a conversation: `follow_up` chained to the request, the same input
    alone (the control: the chained turn must cost more input tokens), a sibling chained to the same request, and
    the first child's input again (a fork: it must cost what it cost before the sibling existed)."""
    return (HttpTurn("chained", {"input": follow_up}, previous=FIRST, recall=recall),
            HttpTurn("alone", {"input": follow_up}),
            HttpTurn("sibling", {"input": SIBLING_INPUT}, previous=FIRST),
            HttpTurn("chained-again", {"input": follow_up}, previous=FIRST))


def call_answer(output: str) -> tuple[Turn, ...]:
    """The turn that answers the request's first function call with `output`, chained to it."""
    return (HttpTurn("tool-output", previous=FIRST, answers_call_of=FIRST, call_output=output),)


@dataclass(frozen=True)
class AgentTask:
    """What the `agents` source asks a coding agent to do: `task`, whose `{file}` is a file of the agent's sandbox
    holding `secret`, which its answer must quote; given the model id of `model_shape` (one of its profile's
    Agent.model_shapes) in place of the target's, or the target's own when None."""

    name: str  # the agent (lmconform.agents)
    task: str
    secret: str
    model_shape: str | None = None
    # Words of filler before the secret in the file: a file past the context, which the agent cannot answer from
    # (what is judged is how it ends on the overflow); 0, a file of the secret's line alone.
    file_words: int = 0

    def document(self) -> dict:
        return {"name": self.name, "task": self.task, "secret": self.secret,
                **({"model_shape": self.model_shape} if self.model_shape else {}),
                **({"file_words": self.file_words} if self.file_words else {})}


@dataclass(frozen=True)
class Case:
    id: str  # "<api>/<slug>"
    api: str
    slug: str
    description: str
    provenance: dict
    method: str
    path: str
    body: Any
    raw_body: str | None
    expect_status: str
    feature: str | None
    turns: tuple[HttpTurn, ...] | tuple[StdioTurn, ...] = ()  # of the API's transport
    source: str | None = None  # a generator of cases (lmconform.fuzz) this case seeds, instead of a request
    # Over stdio: the request sent as a notification, or with this id; the JSON-RPC error code an invalid request
    # is to be answered with.
    notification: bool = False
    request_id: Any = None
    expect_code: int | None = None
    omit: frozenset[str] = frozenset()  # fields the run must not fill in: the case is about their absence
    agent: AgentTask | None = None  # a case of the `agents` source, and each request its agent sent
    pair: str | None = None  # "stream": the request is sent streamed and not, and the two answers compared
    schema_keyword: str | None = None  # the JSON Schema keyword family its response format is graded on
    tool_type: str | None = None  # the tool type beside `function` (Responses) its answer is graded on
    replay: str | None = None  # the form of stateless replay (Responses, `store: false`) its request sends
    # The scenario of the Responses API's WebSocket mode it plays: its request and turns are `response.create`
    # messages over a socket opened on its path (lmconform.run.websocket), not HTTP requests.
    websocket: str | None = None
    plays: int = 1  # the answers it is judged on, at the least (--repeat K asks for K): its verdicts are pass^k
    overflows_context: bool = False  # its prompt is longer than the target's context: an overflow to refuse
    request_field: str | None = None  # the field of a client's requests it is graded on (honoured, refused, ignored)
    headers: tuple[tuple[str, str], ...] = ()  # request headers of its own, beside lmconform's (never a credential)
    parameter: str | None = None  # the optional request parameter it is graded on (honoured, refused, ignored)

    def named_by(self, pattern: str) -> bool:
        """Whether a glob names this case, by its id (`chat/void-weather-tool`, `chat/*`) or its name alone
        (`void-weather-tool`, `*-tool`)."""
        return fnmatch.fnmatchcase(self.id, pattern) or fnmatch.fnmatchcase(self.slug, pattern)

    @property
    def streamed(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def tools(self) -> list:
        body = self.body
        for key in api_of(self.api).tools_at[:-1]:
            body = body.get(key) if isinstance(body, dict) else None
        tools = body.get(api_of(self.api).tools_at[-1]) if isinstance(body, dict) else None
        return tools if isinstance(tools, list) else []

    @property
    def methods(self) -> tuple[str, ...]:
        """Over stdio: the method of each message the case sends, request first ('' for a raw line)."""
        default = api_of(self.api).method
        first = "" if self.raw_body is not None else self.method
        return (first, *("" if isinstance(turn, StdioTurn) and turn.raw_body is not None else turn.method or default
                         for turn in self.turns))

    @property
    def agent_task(self) -> AgentTask:
        """What the case's coding agent is asked to do: a case of the `agents` source, and each request its agent
        sent, has one; asking another case for it is a mistake in the code that asks."""
        if self.agent is None:
            raise ValueError(f"the case {self.id} is no coding agent's task")
        return self.agent

    def turns_of(self, transport: type[TurnT]) -> tuple[TurnT, ...]:
        """The case's turns, of the transport its API speaks (HttpTurn, StdioTurn): what a check or a player of that
        API reads them as. Asking a case for the turns of another transport is a mistake in the code that asks."""
        turns = tuple(turn for turn in self.turns if isinstance(turn, transport))
        if len(turns) != len(self.turns):
            raise TypeError(f"the case {self.id} has turns of another transport than {transport.__name__}")
        return turns

    @property
    def tool_choice(self) -> Any:
        return self.body.get("tool_choice") if isinstance(self.body, dict) else None

    @property
    def asks_usage(self) -> bool:
        options = self.body.get("stream_options") if isinstance(self.body, dict) else None
        return isinstance(options, dict) and options.get("include_usage") is True

    @property
    def previous_response_id(self) -> Any:
        return self.body.get("previous_response_id") if isinstance(self.body, dict) else None

    @property
    def valid(self) -> bool:
        return self.expect_status == "success"

    @property
    def invalid(self) -> bool:
        return self.expect_status == "client_error"

    def document(self, description: str | None = None) -> dict:
        """The case as a case file holds it (lmconform/cases/case.schema.json)."""
        request = {"method": self.method, "path": self.path,
                   **({"headers": dict(self.headers)} if self.headers else {}),
                   **({"raw_body": self.raw_body} if self.raw_body is not None else {"body": self.body})}
        document = {"description": description or self.description, "provenance": self.provenance,
                    "feature": self.feature, "schema_keyword": self.schema_keyword,
                    "tool_type": self.tool_type, "replay": self.replay, "websocket": self.websocket,
                    "plays": self.plays if self.plays != 1 else None,
                    "overflows_context": self.overflows_context or None, "request_field": self.request_field,
                    "parameter": self.parameter,
                    "request": request,
                    "expect": {"status": self.expect_status},
                    "turns": [turn.document() for turn in self.turns] or None, "pair": self.pair,
                    "source": self.source, "agent": self.agent.document() if self.agent else None}
        return {key: value for key, value in document.items() if value is not None}

    def paired_body(self, body: dict) -> dict:
        """The request as its pair sends it (`"pair": "stream"`): streamed if it was not; if it was, without `stream`
        and the options that only a stream takes."""
        if self.streamed:
            return {key: value for key, value in body.items() if key not in ("stream", "stream_options")}
        return {**body, "stream": True}

    def body_for(self, model: str | None, max_tokens: int | None = None, temperature: float | None = None) -> Any:
        """The body as sent to a target: the run's model, output cap and temperature filled in where the case
        leaves them open (a real model with no cap can talk until its context is full)."""
        if not isinstance(self.body, dict):
            return self.body
        defaults = {api_of(self.api).model_field: model, "temperature": temperature}
        cap_field = api_of(self.api).output_cap
        if cap_field:
            defaults[cap_field] = max_tokens
        filled = {key: value for key, value in defaults.items()
                  if value is not None and key not in self.body and key not in self.omit}
        return {**filled, **self.body}
