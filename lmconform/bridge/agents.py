"""The agents that answer a turn: `echo`, deterministic and needing no endpoint, and `openai`, which streams the
conversation through an OpenAI-compatible chat completions endpoint with the openai SDK.

An agent is an async generator of events: Text as it is produced, and ToolCallMade when it calls a tool. The
dispatcher turns events into `lm/responsePart` notifications and holds tool calls to the end of the answer; an
agent only says what it would say.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, Protocol

from lmconform.bridge.history import COMMITTED, DISCARDED, NEW_SESSION, Arrival, Message, render
from lmconform.bridge.params import Tool
from lmconform.reference.model import schema_arguments

AGENTS = ("openai", "echo")
_PREVIOUS = {NEW_SESSION: "new session", COMMITTED: "previous turn committed", DISCARDED: "previous turn discarded"}


@dataclass(frozen=True)
class Text:
    value: str


@dataclass(frozen=True)
class ToolCallMade:
    call_id: str  # the agent's id for the call; the dispatcher keeps it when it is new, else mints one
    name: str
    arguments: str  # JSON text, as OpenAI-style models produce it; the dispatcher parses it


Event = Text | ToolCallMade


class AgentFailure(Exception):
    """The agent could not answer; the text goes to the client as error -32000."""


@dataclass(frozen=True)
class TurnInput:
    arrival: Arrival
    tools: tuple[Tool, ...]
    tool_mode: str


class Agent(Protocol):
    def answer(self, turn: TurnInput) -> AsyncGenerator[Event, None]: ...

    async def aclose(self) -> None: ...


def describe(arrival: Arrival) -> str:
    """The echo agent's answer, which says what its session gave it, in a form a test can match:

        session 1 turn 2: 2 committed messages, previous turn committed; new input: user: And now?

    `previous turn discarded` (with the discarded turn's messages absent from both the count and the new input)
    is how a client sees that an edit was taken for an edit; `new session` that no session matched."""
    return (f"session {arrival.session.number} turn {arrival.turn}: {len(arrival.committed)} committed messages, "
            f"{_PREVIOUS[arrival.previous]}; new input: {render(arrival.new_input)}")


def _text_of(messages: tuple[Message, ...]) -> str:
    return " ".join(part["value"] for item in messages for part in item["content"] if part["type"] == "text")


class EchoAgent:
    """Answers with `describe(arrival)`, word by word. With tools it calls one, like the reference server: when
    toolMode is `required`, or when the new input names a tool; never right after a tool result. Around a call it
    says `Calling NAME.` before and ` I will go on when it returns.` after, as real agents often talk after a
    call: the bridge, not the agent, must keep the call last."""

    def __init__(self) -> None:
        self._calls = 0

    async def aclose(self) -> None:
        pass

    async def answer(self, turn: TurnInput) -> AsyncGenerator[Event, None]:
        text = describe(turn.arrival)
        tool = self._tool_to_call(turn)
        if tool is not None:
            text += f" Calling {tool.name}."
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield Text(piece)
        if tool is not None:
            self._calls += 1
            arguments = schema_arguments(tool.input_schema, _text_of(turn.arrival.new_input))
            yield ToolCallMade(f"echo-call-{self._calls}", tool.name, json.dumps(arguments, ensure_ascii=False))
            yield Text(" I will go on when it returns.")

    @staticmethod
    def _tool_to_call(turn: TurnInput) -> Tool | None:
        new_input = turn.arrival.new_input
        if not turn.tools or (new_input and any(part["type"] == "tool_result" for part in new_input[-1]["content"])):
            return None
        if turn.tool_mode == "required":
            return turn.tools[0]
        said = _text_of(new_input).lower()
        return next((tool for tool in turn.tools if tool.name.lower() in said), None)


def openai_messages(conversation: list[Message]) -> list[dict[str, Any]]:
    """VS Code messages as chat completion messages: an assistant's tool_call parts become its `tool_calls`, a
    user's tool_result parts become `tool` messages (first: they must follow the call), its text a user message."""
    converted: list[dict[str, Any]] = []
    for item in conversation:
        text = "".join(part["value"] for part in item["content"] if part["type"] == "text")
        if item["role"] == "assistant":
            calls = [{"id": part["toolCallId"], "type": "function",
                      "function": {"name": part["toolName"], "arguments": _json_text(part["parameters"])}}
                     for part in item["content"] if part["type"] == "tool_call"]
            converted.append({"role": "assistant", "content": text or (None if calls else ""),
                              **({"tool_calls": calls} if calls else {})})
            continue
        results = [part for part in item["content"] if part["type"] == "tool_result"]
        converted += ({"role": "tool", "tool_call_id": part["toolCallId"], "content": _json_text(part["result"])}
                      for part in results)
        if text or not results:
            converted.append({"role": "user", "content": text})
    return converted


def _json_text(value: Any) -> str:
    """A string as it is (it already is the text), anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class OpenAIAgent:
    """A stateless model behind the agent: each turn sends the session's conversation (committed history, then
    the new input) as one streamed chat completion request, through the real openai SDK client."""

    def __init__(self, base_url: str, api_key: str | None, model: str | None, max_tokens: int | None = None,
                 temperature: float | None = None) -> None:
        import openai  # here, so the echo agent starts without loading the SDK

        # No retries: a failure is the answer (error -32000), and a retry would hide it and slow the client.
        self._client = openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key=api_key or "lmconform", max_retries=0)
        self._model = model
        # Sampling the protocol has no words for, set for the whole process: a cap and 0 keep a small local model's
        # answers short and repeatable.
        self._sampling = {key: value for key, value in (("max_tokens", max_tokens), ("temperature", temperature))
                          if value is not None}

    async def aclose(self) -> None:
        await self._client.close()

    async def _model_id(self) -> str:
        if self._model is None:
            listed = (await self._client.models.list()).data
            if not listed:
                raise AgentFailure("the endpoint lists no model at /v1/models; pass --model")
            self._model = listed[0].id
        return self._model

    async def answer(self, turn: TurnInput) -> AsyncGenerator[Event, None]:
        request: dict[str, Any] = {"messages": openai_messages(turn.arrival.conversation), "stream": True,
                                   **self._sampling}
        if turn.tools:
            request["tools"] = [{"type": "function", "function": {"name": tool.name, "description": tool.description,
                                                                  "parameters": tool.input_schema}}
                                for tool in turn.tools]
            request["tool_choice"] = turn.tool_mode  # "auto" and "required" mean the same in both protocols
        calls: dict[int, dict[str, str]] = {}
        try:
            stream = await self._client.chat.completions.create(model=await self._model_id(), **request)
            try:
                async for chunk in stream:
                    for choice in chunk.choices:
                        if choice.delta is None:
                            continue
                        if choice.delta.content:
                            yield Text(choice.delta.content)
                        for call in choice.delta.tool_calls or ():
                            _accumulate(calls.setdefault(call.index if isinstance(call.index, int) else 0,
                                                         {"id": "", "name": "", "arguments": ""}), call)
            finally:
                # Also on cancellation: closing the response closes the connection, which ends the upstream's
                # generation (the reference server stops a stalled stream when its client disconnects).
                await stream.close()
        except AgentFailure:
            raise
        except Exception as error:  # anything from the endpoint or the SDK is the upstream's failure, told as such
            raise AgentFailure(_failure_text(error)) from None
        for index in sorted(calls):
            yield ToolCallMade(calls[index]["id"], calls[index]["name"], calls[index]["arguments"])


def _failure_text(error: Exception) -> str:
    """What went wrong, with the endpoint's own words: the SDK's message for an error status is only the status
    when the body is not shaped as OpenAI's (`{"error": "..."}` as LM Studio sends it)."""
    text = f"{type(error).__name__}: {error}"
    body = getattr(error, "body", None)
    if body is None:
        return text
    said = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return text if said in text else f"{text}: {said}"


def _accumulate(entry: dict[str, str], call: Any) -> None:
    if call.id:
        entry["id"] = call.id
    if call.function is not None:
        entry["name"] = call.function.name or entry["name"]  # sent once; a server that repeats it says it again
        entry["arguments"] += call.function.arguments or ""
