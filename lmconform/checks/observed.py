"""What a check looks at: one case's exchange with a target, and the views derived from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lmconform.apis import api_of
from lmconform.cases import Case
from lmconform.normalize.chat import ChatStream, normalize_chat_stream
from lmconform.normalize.events import Generation, ToolCall
from lmconform.normalize.responses import ResponsesStream, normalize_responses_stream, response_object
from lmconform.target import Target
from lmconform.vocabulary import NotApplicable
from lmconform.wire.http import HttpExchange

Sender = Callable[[str, str, Any], HttpExchange]


def generation_of(api: str, exchange: HttpExchange) -> Generation:
    """Any exchange of `api` in the generation vocabulary, from whichever form actually arrived."""
    normaliser = api_of(api).normaliser
    if normaliser is None:
        raise NotApplicable(f"the {api} API answers with no generation")
    return normaliser(exchange)


@dataclass
class Observed:
    case: Case
    target: Target
    exchange: HttpExchange
    send: Sender | None = None  # for checks that need further requests (a chain, a fork)
    feature_missing: bool = False  # the target lacks the optional feature the case exercises
    send_upstream: Callable[[], HttpExchange] | None = None  # the same request straight to --upstream
    upstream_target: Target | None = None
    _follow_ups: dict[str, HttpExchange] = field(default_factory=dict, repr=False)

    @property
    def request_body(self) -> Any:
        return self.exchange.request.body

    @property
    def succeeded(self) -> bool:
        return self.exchange.status is not None and 200 <= self.exchange.status < 300

    def require_success(self) -> None:
        """Content checks have nothing to judge in a refusal; the status checks speak to that."""
        if not self.succeeded:
            raise NotApplicable(f"the answer was HTTP {self.exchange.status}")

    def require_stream(self) -> ChatStream:
        self.require_success()
        if not self.exchange.is_event_stream:
            raise NotApplicable(f"the answer is {self.exchange.content_type or 'untyped'}, not an event stream")
        return self.chat_stream

    def require_responses_stream(self) -> ResponsesStream:
        self.require_success()
        if not self.exchange.is_event_stream:
            raise NotApplicable(f"the answer is {self.exchange.content_type or 'untyped'}, not an event stream")
        return self.responses_stream

    def require_tool_calls(self) -> list[ToolCall]:
        self.require_success()
        calls = self.generation.tool_calls()
        if not calls:
            raise NotApplicable("the answer calls no tool")
        return calls

    @property
    def chat_stream(self) -> ChatStream:
        return self.exchange.view(normalize_chat_stream)

    @property
    def responses_stream(self) -> ResponsesStream:
        return self.exchange.view(normalize_responses_stream)

    @property
    def generation(self) -> Generation:
        """The answer in the generation vocabulary, from whichever form actually arrived."""
        return generation_of(self.case.api, self.exchange)

    @property
    def secrets(self) -> tuple[str, ...]:
        return self.target.secrets + (self.upstream_target.secrets if self.upstream_target else ())

    @cached_property
    def upstream(self) -> HttpExchange:
        """The same request sent straight to the upstream, for differential checks."""
        if self.send_upstream is None:
            raise NotApplicable("no --upstream to compare with")
        return self.send_upstream()

    @cached_property
    def response_object(self) -> dict:
        """For /v1/responses: the final response object, from the body or the stream's terminal event."""
        return response_object(self.exchange)

    def follow_up(self, key: str, body: Any, method: str = "POST") -> HttpExchange:
        """A further request of this case, sent once per key however many checks ask for it, in first-asked order."""
        if key not in self._follow_ups:
            if self.send is None:
                raise NotApplicable("no way to send further requests in this run")
            self._follow_ups[key] = self.send(method, self.case.path, body)
        return self._follow_ups[key]
