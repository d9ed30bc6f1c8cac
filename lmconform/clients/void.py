"""What Void shows its user for a streamed chat completion.

Void (github.com/voideditor/void) reads LM Studio, vLLM, LiteLLM, Ollama and any "OpenAI-compatible" endpoint
through the npm `openai` package with `stream: true`, and folds the chunks into one text, one reasoning string
and at most one tool call. This module replays a captured exchange through a line-by-line emulation of that
code, JavaScript semantics included. Upstream sources:

- voideditor/void, src/vs/workbench/contrib/void/electron-main/llmMessage/sendLLMMessage.impl.ts at commit
  40a27cd1eede62d23034d6fc538c70e7e2d5fd58 (its last change; unchanged at the repository's head b3166e7e):
  `_sendOpenAICompatibleChat` (the accumulator and the "empty" error), `rawToolCallObjOfParamsStr` (the
  params parse), `invalidApiKeyMessage` (what a 401 shows).
- voideditor/void, src/vs/workbench/contrib/void/common/modelCapabilities.ts at commit
  940155ac80120a0cdb40f30168ec99ba092579b9: `providerReasoningIOSettings.output`, which names the delta
  field read as reasoning per provider. For `lmStudio` and `ollama` it names none (`needsManualParse`), so
  Void never reads `delta.reasoning` from LM Studio.
- Void pins openai 4.96.0 (package-lock.json) and runs on Electron 34.3.2 (.npmrc), hence V8 13.x wording.
- What the SDK does between the socket and Void: lmconform.clients.openai_node; JavaScript's values and V8's
  `JSON.parse`: lmconform.clients.js.

Not emulated: the `<think>` tag splitting Void applies for models it recognises by name (it changes what the
chat pane shows, not the empty check, which reads the raw text), and what the SDK does when the connection
breaks mid-body (the captured reads are replayed as if they were the whole body).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmconform.clients.js.json_parse import json_parse
from lmconform.clients.js.values import Thrown, get, is_zero, iterate, or_empty, or_empty_list, to_string, truthy
from lmconform.clients.openai_node import sdk_chunks
from lmconform.wire.http import HttpExchange

EMPTY_RESPONSE = "Void: Response from model was empty."

# Void's provider name -> (display title used in its 401 message, delta field it reads as reasoning).
PROVIDERS: dict[str, tuple[str, str | None]] = {
    "lmStudio": ("LM Studio", None),
    "ollama": ("Ollama", None),
    "vLLM": ("vLLM", "reasoning_content"),
    "liteLLM": ("LiteLLM", "reasoning_content"),
    "openAICompatible": ("OpenAI-Compatible", "reasoning_content"),
}


@dataclass(frozen=True)
class VoidOutcome:
    """What Void ends with. On an error, the strings are what it had accumulated when it stopped."""

    text: str
    reasoning: str
    tool_name: str
    tool_id: str
    tool_params_str: str
    # The params object Void hands to the tool, or None when it makes no tool call. A JSON array passes Void's
    # `typeof input === 'object'` test, so it can be a list.
    tool_params: dict[str, Any] | list[Any] | None
    error: str | None  # exactly what Void shows: its own message, or the exception as `error + ''`


def void_read(exchange: HttpExchange, *, provider: str = "lmStudio") -> VoidOutcome:
    title, reasoning_field = PROVIDERS[provider]
    acc = _Accumulator(reasoning_field)
    try:
        for chunk in sdk_chunks(exchange):
            acc.feed(chunk)
    except Thrown as thrown:
        # Void: `error instanceof OpenAI.APIError && error.status === 401` gets its own message.
        return acc.outcome(f"Invalid {title} API key." if thrown.status == 401 else thrown.text)
    if not acc.text and not acc.reasoning and not acc.tool_name:
        return acc.outcome(EMPTY_RESPONSE)
    return acc.outcome(None, _raw_tool_params(acc.tool_params_str))


class _Accumulator:
    """The body of `for await (const chunk of response)` in `_sendOpenAICompatibleChat`."""

    def __init__(self, reasoning_field: str | None) -> None:
        self.reasoning_field = reasoning_field
        self.text = ""
        self.reasoning = ""
        self.tool_name = ""
        self.tool_id = ""
        self.tool_params_str = ""

    def feed(self, chunk: Any) -> None:
        # const newText = chunk.choices[0]?.delta?.content ?? ''
        self.text += to_string(or_empty(get(_delta(chunk), "content", optional=True)))

        # for (const tool of chunk.choices[0]?.delta?.tool_calls ?? [])
        for tool in iterate(or_empty_list(get(_delta(chunk), "tool_calls", optional=True))):
            if not is_zero(get(tool, "index")):  # undefined !== 0: a missing index is skipped too
                continue
            function = get(tool, "function")
            self.tool_name += to_string(or_empty(get(function, "name", optional=True)))
            self.tool_params_str += to_string(or_empty(get(function, "arguments", optional=True)))
            self.tool_id += to_string(or_empty(get(tool, "id")))

        if self.reasoning_field:
            # (chunk.choices[0]?.delta?.[field] || '') + ''
            reasoning = get(_delta(chunk), self.reasoning_field, optional=True)
            self.reasoning += to_string(reasoning) if truthy(reasoning) else ""

    def outcome(self, error: str | None, params: dict[str, Any] | list[Any] | None = None) -> VoidOutcome:
        return VoidOutcome(
            text=self.text,
            reasoning=self.reasoning,
            tool_name=self.tool_name,
            tool_id=self.tool_id,
            tool_params_str=self.tool_params_str,
            tool_params=params,
            error=error,
        )


def _delta(chunk: Any) -> Any:
    # chunk.choices[0]?.delta — `chunk.choices[0]` throws when chunk is null or has no choices.
    return get(get(get(chunk, "choices"), "0"), "delta", optional=True)


def _raw_tool_params(params_str: str) -> dict[str, Any] | list[Any] | None:
    """`rawToolCallObjOfParamsStr`: JSON.parse in a try/catch, then null and non-objects are no tool call."""
    try:
        value = json_parse(params_str)
    except Thrown:
        return None
    return value if isinstance(value, (dict, list)) else None
