"""What a check looks at: one case's exchange with a target, and the views derived from it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from lmconform.cases import Case
from lmconform.checks.registry import NotApplicable
from lmconform.normalize.chat import ChatStream, normalize_chat_body, normalize_chat_stream
from lmconform.normalize.events import Generation, ToolCall
from lmconform.target import Target
from lmconform.wire.exchange import Exchange


@dataclass
class Observed:
    case: Case
    target: Target
    exchange: Exchange

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

    def require_tool_calls(self) -> list[ToolCall]:
        self.require_success()
        calls = self.generation.tool_calls()
        if not calls:
            raise NotApplicable("the answer calls no tool")
        return calls

    @cached_property
    def chat_stream(self) -> ChatStream:
        return normalize_chat_stream(self.exchange)

    @cached_property
    def generation(self) -> Generation:
        """The answer in the generation vocabulary, from whichever form actually arrived."""
        if self.exchange.is_event_stream:
            return self.chat_stream.generation
        return normalize_chat_body(self.exchange.json)
