"""The generation event grammar, in the order LM Studio's generator API defines it for tool-calling generators
(https://lmstudio.ai/docs/typescript/plugins/generator/tool-calling-generators):

    text*  ( tool_call_started  tool_call_name?  tool_call_arguments_fragment*  (tool_call_ended | tool_call_failed)  text* )*  end

Normalisers report what the wire said, not what it meant: a name sent twice is two `ToolCallName` events, an
arguments object is a fragment that is not a string. Checks decide whether that is a defect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CHANNELS = ("content", "reasoning", "refusal")
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


@dataclass(frozen=True)
class Source:
    """Where an event came from, for evidence: a label ("SSE event #3 (byte 412)") and the raw text."""

    label: str
    raw: str

    def __str__(self) -> str:
        return f"{self.label}: {self.raw}"


@dataclass(frozen=True)
class Text:
    text: str
    channel: str  # "content", "reasoning" (the API's reasoning channel) or "refusal" (a model's refusal, not an answer)
    source: Source


@dataclass(frozen=True)
class ToolCallStarted:
    call: int  # position of the call in this generation, from 0
    wire_index: Any  # the index as sent (MISSING when absent)
    id: Any
    type: Any
    source: Source


@dataclass(frozen=True)
class ToolCallName:
    call: int
    name: Any
    source: Source


@dataclass(frozen=True)
class ToolCallArgumentsFragment:
    call: int
    fragment: Any  # as sent: a string when the server is right
    source: Source


@dataclass(frozen=True)
class ToolCallEnded:
    call: int
    source: Source


@dataclass(frozen=True)
class ToolCallFailed:
    call: int
    reason: str
    source: Source


@dataclass(frozen=True)
class End:
    finish_reason: Any
    usage: Any
    source: Source


Event = Text | ToolCallStarted | ToolCallName | ToolCallArgumentsFragment | ToolCallEnded | ToolCallFailed | End


@dataclass
class ToolCall:
    """Every event of one call, gathered: the view semantic checks read."""

    call: int
    started: ToolCallStarted
    names: list[ToolCallName] = field(default_factory=list)
    fragments: list[ToolCallArgumentsFragment] = field(default_factory=list)
    failed: ToolCallFailed | None = None

    @property
    def name(self) -> str:
        """The name as first sent: what the server meant, whatever it repeated later."""
        for event in self.names:
            if isinstance(event.name, str) and event.name:
                return event.name
        return ""

    @property
    def arguments_text(self) -> str:
        """The string fragments concatenated, as an OpenAI-style client accumulates them."""
        return "".join(f.fragment for f in self.fragments if isinstance(f.fragment, str))

    def parsed_arguments(self) -> tuple[Any, str | None]:
        """(value, None) when the concatenated arguments are JSON; (None, reason) otherwise."""
        text = self.arguments_text
        try:
            return json.loads(text), None
        except ValueError as error:
            return None, f"{error} in {text[:200]!r}"


@dataclass
class Generation:
    events: list[Event] = field(default_factory=list)

    def text(self, channel: str = "content") -> str:
        return "".join(e.text for e in self.events if isinstance(e, Text) and e.channel == channel)

    def tool_calls(self) -> list[ToolCall]:
        calls: dict[int, ToolCall] = {}
        for event in self.events:
            if isinstance(event, ToolCallStarted):
                calls[event.call] = ToolCall(call=event.call, started=event)
            elif isinstance(event, ToolCallName) and event.call in calls:
                calls[event.call].names.append(event)
            elif isinstance(event, ToolCallArgumentsFragment) and event.call in calls:
                calls[event.call].fragments.append(event)
            elif isinstance(event, ToolCallFailed) and event.call in calls:
                calls[event.call].failed = event
        return [calls[key] for key in sorted(calls)]

    @property
    def end(self) -> End | None:
        ends = [e for e in self.events if isinstance(e, End)]
        return ends[-1] if ends else None

    def is_empty(self) -> bool:
        """Void's test (no text, no reasoning and no tool name), a refusal counting as an answer: OpenAI's APIs send
        one instead of the text, and the openai SDKs read it."""
        return not any(self.text(channel).strip() for channel in CHANNELS) and not any(
            call.name for call in self.tool_calls()
        )

    @property
    def refused(self) -> bool:
        """The model refused (a `refusal` member or part): what it says is not the answer asked for."""
        return bool(self.text("refusal").strip())
