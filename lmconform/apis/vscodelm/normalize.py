"""The VS Code language-model bridge protocol (vscodelm) read into the generation vocabulary, and the requests of a
case as the bridge answered each (`Asked`): its parts, its complete, its response.

`lm/responsePart` notifications carry `text` and `tool_call` parts; `lm/responseComplete` ends a turn. A text part
is text; a tool call part is a whole call at once (started, its name, its parameters as one arguments fragment of
JSON text, ended); the complete is the end. The `generation.*` checks then judge a bridge's answers unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lmconform.apis.vscodelm import CHAT_RESPONSE, RESPONSE_COMPLETE, RESPONSE_PART, TOKEN_COUNT
from lmconform.normalize.events import (
    MISSING,
    End,
    Event,
    Generation,
    Source,
    Text,
    ToolCallArgumentsFragment,
    ToolCallEnded,
    ToolCallName,
    ToolCallStarted,
)
from lmconform.normalize.reading import Reading
from lmconform.wire.jsonlines import Message
from lmconform.wire.stdio import StdioExchange

METHODS_WITH_MODEL = frozenset({CHAT_RESPONSE, TOKEN_COUNT})  # their params name the model as `modelId`
# After an lm/cancel, the parts already on their way may still arrive for this long; none after it. A run watches
# a cancelled request for twice as long, so that a bridge that streams on is seen doing so.
CANCEL_BOUND_S = 1.0
# The parts a bridge may send, each with its fields and whether a field's value must be a string.
PART_FIELDS = {"text": {"value": True}, "tool_call": {"toolCallId": True, "toolName": True, "parameters": False}}


def method_of(message: Message) -> Any:
    return message.value.get("method")


def part_of(message: Message) -> Any:
    params = message.value.get("params")
    return params.get("part") if isinstance(params, dict) else None


def well_formed_part(part: Any) -> str | None:
    """Why a part is not one the protocol has (None when it is): its type, and the fields of that type."""
    if not isinstance(part, dict):
        return f"a part that is not an object: {json.dumps(part)[:120]}"
    kind = part.get("type")
    if kind not in PART_FIELDS:
        return f"a part of type {json.dumps(kind)}"
    for key, is_string in PART_FIELDS[kind].items():
        if key not in part:
            return f"a {kind} part without `{key}`"
        if is_string and not isinstance(part[key], str):
            return f"a {kind} part whose `{key}` is {json.dumps(part[key])[:80]}, not a string"
    return None


def _source(message: Message) -> Source:
    first = message.lines[0]
    return Source(f"stdout line #{first.index} at {message.at:.3f} s", message.text[:600])


def normalize_vscodelm(exchange: StdioExchange) -> Generation:
    """A chat request's answer as generation events: what its parts and its complete said, in their order. A
    part of a type the protocol does not have is left out (a client has nothing to show for it)."""
    events: list[Event] = []
    calls = 0
    for message in exchange.messages:
        source = _source(message)
        if method_of(message) == RESPONSE_COMPLETE:
            events.append(End(None, None, source))
            continue
        part = part_of(message)
        if method_of(message) != RESPONSE_PART or well_formed_part(part) is not None:
            continue
        if part["type"] == "text":
            events.append(Text(part["value"], "content", source))
            continue
        parameters = part["parameters"]
        events += [ToolCallStarted(calls, MISSING, part["toolCallId"], "function", source),
                   ToolCallName(calls, part["toolName"], source),
                   ToolCallArgumentsFragment(calls, json.dumps(parameters, ensure_ascii=False), source),
                   ToolCallEnded(calls, source)]
        calls += 1
    return Generation(events)


@dataclass(frozen=True)
class Asked:
    """A message the case wrote (request first), named as the case names it, and what the bridge said about it."""

    name: str
    exchange: StdioExchange

    @property
    def method(self) -> str | None:
        return self.exchange.request.method

    @property
    def params(self) -> Any:
        return self.exchange.request.body

    @property
    def is_request(self) -> bool:
        return self.exchange.request.is_request

    @property
    def request_id(self) -> Any:
        return self.exchange.request_id

    @property
    def sent_at(self) -> float:
        return self.exchange.sent_at

    @property
    def parts(self) -> list[Message]:
        return [m for m in self.exchange.messages if method_of(m) == RESPONSE_PART]

    @property
    def answer_parts(self) -> list[Message]:
        """The parts a client shows: those before the request's complete or response (it closes the answer)."""
        return answer_parts(self.exchange)

    @property
    def completes(self) -> list[Message]:
        return [m for m in self.exchange.messages if method_of(m) == RESPONSE_COMPLETE]

    @property
    def responses(self) -> list[Message]:
        return [m for m in self.exchange.messages if "method" not in m.value]

    @property
    def response(self) -> Message | None:
        responses = self.responses
        return responses[0] if responses else None

    @property
    def error(self) -> Any:
        """The error object of its response, when it was answered with one."""
        response = self.response
        return response.value.get("error") if response is not None else None

    @property
    def error_code(self) -> Any:
        return self.error.get("code") if isinstance(self.error, dict) else None


def answer_parts(exchange: StdioExchange) -> list[Message]:
    """The parts of a request's answer as a client receives them: up to its complete or its response, which close
    the answer; what comes after is for a request the client has finished with."""
    parts = []
    for message in exchange.messages:
        if method_of(message) != RESPONSE_PART:
            break
        parts.append(message)
    return parts


def assistant_message(exchange: StdioExchange) -> dict | None:
    """The answer as the client keeps it in its history: the parts it can show (text, tool calls) of those it
    received before the answer closed, in order; None when there is none."""
    kept = [part for part in map(part_of, answer_parts(exchange)) if well_formed_part(part) is None]
    return {"role": "assistant", "content": kept} if kept else None


def first_tool_call_id(exchange: StdioExchange) -> str | None:
    message = assistant_message(exchange)
    calls = [part["toolCallId"] for part in (message or {}).get("content", ()) if part["type"] == "tool_call"]
    return calls[0] if calls else None


def text_message(role: str, text: str) -> dict:
    return {"role": role, "content": [{"type": "text", "value": text}]}


def tool_result_message(call_id: str, result: Any) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "toolCallId": call_id, "result": result}]}


READING = Reading(normalize_vscodelm)
