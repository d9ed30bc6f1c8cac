"""A `POST /v1/responses` request as LM Studio reads it: the body, capped and parsed, then validated as Zod
validates it, the first issue reported in an OpenAI-style error object.

Its tool types are OpenAI's (a function, a namespace of functions, a custom tool, the hosted tools Codex sends):
LM Studio's refusal of all but `function` and `mcp` is the variant responses-function-tools-only.

LM Studio reports Zod's message, code and dotted path. Its wording is on record for a nested tool (see `_tool`);
the other messages are Zod's defaults for the same kinds of issue. Two faults are flags asked about here, not
functions over the body, because each adds a rule at one point of that order: which issue a request with several
gets reported depends on where the rule sits.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lmconform.apis.responses.reference.faults.compaction import (
    COMPACTION_INPUT_500,
    COMPACTION_INPUT_FORGOTTEN,
    COMPACTION_INPUT_REFUSED,
)
from lmconform.apis.responses.reference.faults.coverage import (
    EMPTY_PARAMETERS_REJECTED,
    MULTI_ITEM_INPUT_REJECTED,
    TEXT_FORMAT_REQUIRED,
)
from lmconform.apis.responses.reference.faults.defects import (
    FLATTENED_TOOLS_REJECTED,
    FUNCTION_CALL_OUTPUT_REJECTED,
    is_nested_tool,
)
from lmconform.apis.responses.reference.faults.generated import UNKNOWN_TOOL_CHOICE_ACCEPTED
from lmconform.apis.responses.reference.faults.parameters import refused_parameter
from lmconform.apis.responses.reference.faults.tool_types import FUNCTION_TOOLS_ONLY
from lmconform.reference.model import alternatives_of, content_text
from lmconform.reference.store import MAX_BODY_BYTES
from lmconform.reference.wire import DEFAULT_MODEL, reject_json_constant

ROLES = ("user", "system", "developer", "assistant")
TOOL_CHOICES = ("none", "auto", "required")
EFFORTS = ("low", "medium", "high")
TEXT_PARTS = ("input_text", "output_text")
# The parts of a user's message that attach something, each by one of its sources: an image by URL (an https one,
# or the image itself as a `data:` URL) or an uploaded file's id, at a level of detail; a file (a PDF) inline as a
# `data:` URL, by URL or by id. The reference model reads the text beside them and none of what they attach.
ATTACHMENT_SOURCES = {"input_image": ("image_url", "file_id"), "input_file": ("file_data", "file_url", "file_id")}
IMAGE_DETAILS, URL_SCHEMES = ("auto", "low", "high"), ("https://", "http://", "data:")
ITEM_TYPES = ("message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
              "reasoning", "compaction")
# OpenAI's tool types beside `function`: a namespace of functions and a custom (freeform or grammar) tool, which the
# model calls, and the hosted tools Codex sends, which OpenAI runs itself and are accepted and echoed here.
CALLED_TOOL_TYPES = ("function", "namespace", "custom")
HOSTED_TOOL_TYPES = ("web_search", "tool_search", "local_shell", "image_generation", "mcp")
CUSTOM_FORMATS = ("text", "grammar")
GRAMMAR_SYNTAXES = ("lark", "regex")
TEXT_FORMATS = ("text", "json_object", "json_schema")

_ABSENT = object()  # a key not in the body, which Zod reports as "Required" where null is a wrong type


class Rejected(Exception):
    """A request answered with an OpenAI-style error object instead of a response."""

    def __init__(self, message: str, param: str | None, code: str | None, status: int = 400) -> None:
        super().__init__(message)
        self.error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
        self.status = status

    def response(self) -> Response:
        return JSONResponse({"error": self.error}, status_code=self.status)


OUTPUT_LOGPROBS = "message.output_text.logprobs"  # what `include` names to get them
# What `include` names to get each reasoning item's thought back as an opaque token: a client that stores nothing
# (`store: false`, as Codex CLI) replays it on its next turn.
ENCRYPTED_REASONING = "reasoning.encrypted_content"


@dataclass(frozen=True)
class Turn:
    """A valid request. `input` is in chat messages; `tools` and `tool_choice` are as given, to be echoed."""

    input: list[dict[str, Any]]
    instructions: str | None
    tools: list[dict[str, Any]]
    tool_choice: str | dict[str, Any]
    parallel_tool_calls: bool | None
    temperature: float | None  # echoed, as OpenAI does; null when the request sets none
    top_p: float | None
    metadata: dict[str, Any] | None
    prompt_cache_key: str | None  # echoed, as OpenAI does
    previous_id: str | None
    reasoning: bool
    store: bool
    stream: bool
    model: str
    max_output_tokens: int | None = None
    text_format: dict[str, Any] | None = None  # `text.format`, when it asks for more than text
    logprobs: bool = False  # `include` asks for the output text's log probabilities
    alternatives: int = 0  # … and `top_logprobs` this many alternatives to each token
    encrypted_reasoning: bool = False  # `include` asks for the reasoning items' encrypted_content


async def json_body(request: Request) -> Any:
    """The parsed body, read no further than the cap: the store's memory bound rests on it."""
    received = bytearray()
    async for piece in request.stream():
        received += piece
        if len(received) > MAX_BODY_BYTES:
            raise Rejected(f"Request body is larger than {MAX_BODY_BYTES} bytes.", None, "request_too_large", 413)
    try:
        return json.loads(received, parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        raise Rejected("Request body must be valid JSON.", None, None) from None


def call_message(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """The chat message of one function call: an input item, or an output item carried into the next turn."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def turn_of(body: Any, faults: frozenset[str]) -> Turn:
    """The request as a Turn, or Rejected with the first issue Zod would report."""
    if not isinstance(body, dict):
        raise Rejected(f"Expected object, received {_zod_type(body)}", None, "invalid_type")
    given = body.get("input", _ABSENT)
    if given is _ABSENT:
        raise Rejected("Required", "input", "invalid_type")
    if isinstance(given, str):
        messages = [{"role": "user", "content": given}]
    elif isinstance(given, list) and len(given) > 1 and MULTI_ITEM_INPUT_REJECTED in faults:
        raise Rejected("Only one input item is supported.", "input", "unsupported_value")
    elif isinstance(given, list) and given:
        messages = [message for i, item in enumerate(given) for message in _input_item(i, item, faults)]
    elif isinstance(given, list):
        raise Rejected("Array must contain at least 1 element(s)", "input", "too_small")
    else:
        raise Rejected("Invalid input", "input", "invalid_union")
    tools = [_tool(i, tool, faults) for i, tool in enumerate(_field(body, "tools", "array", "tools") or [])]
    refused = refused_parameter(body, faults)
    if refused is not None:
        raise Rejected(f"Unrecognized request argument supplied: {refused}", refused, "unknown_parameter")
    reasoning = _field(body, "reasoning", "object", "reasoning") or {}
    effort = reasoning.get("effort")
    if effort is not None:
        _enum(effort, EFFORTS, "reasoning.effort")
    include = _field(body, "include", "array", "include") or []
    return Turn(
        input=messages,
        instructions=_field(body, "instructions", "string", "instructions"),
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice"), tools, faults),
        parallel_tool_calls=_field(body, "parallel_tool_calls", "boolean", "parallel_tool_calls"),
        temperature=_field(body, "temperature", "number", "temperature"),
        top_p=_field(body, "top_p", "number", "top_p"),
        metadata=_field(body, "metadata", "object", "metadata"),
        prompt_cache_key=_field(body, "prompt_cache_key", "string", "prompt_cache_key"),
        previous_id=_field(body, "previous_response_id", "string", "previous_response_id"),
        # A reasoning model thinks whether the request sets an effort or only asks for a summary (Codex CLI sends
        # `reasoning: {summary: "auto"}` alone).
        reasoning=effort is not None or reasoning.get("summary") is not None,
        store=_field(body, "store", "boolean", "store") is not False,
        stream=_field(body, "stream", "boolean", "stream") is True,
        model=_field(body, "model", "string", "model") or DEFAULT_MODEL,
        max_output_tokens=_field(body, "max_output_tokens", "number", "max_output_tokens"),
        text_format=_text_format(_field(body, "text", "object", "text"), faults),
        logprobs=OUTPUT_LOGPROBS in include,
        encrypted_reasoning=ENCRYPTED_REASONING in include,
        alternatives=alternatives_of(body),
    )


def _text_format(text: dict[str, Any] | None, faults: frozenset[str]) -> dict[str, Any] | None:
    """`text.format` when it asks for JSON; a `text` without `format` means plain text."""
    if text is None:
        return None
    text_format = text.get("format", _ABSENT)
    if text_format is _ABSENT and TEXT_FORMAT_REQUIRED in faults:
        raise Rejected("Required", "text.format", "missing_required_parameter")
    if text_format is _ABSENT or text_format is None:
        return None
    if not isinstance(text_format, dict):
        raise Rejected(f"Expected object, received {_zod_type(text_format)}", "text.format", "invalid_type")
    kind = _enum(text_format.get("type", _ABSENT), TEXT_FORMATS, "text.format.type")
    if kind == "json_schema":
        _field(text_format, "schema", "object", "text.format.schema", required=True)
    return text_format if kind != "text" else None


def _zod_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _field(container: dict[str, Any], key: str, expected: str, param: str, required: bool = False) -> Any:
    """The value of an optional (absent or null gives None) or required field of one JSON type."""
    value = container.get(key, _ABSENT)
    if value is _ABSENT and required:
        raise Rejected("Required", param, "invalid_type")
    if value is _ABSENT or (value is None and not required):
        return None
    if _zod_type(value) != expected:
        raise Rejected(f"Expected {expected}, received {_zod_type(value)}", param, "invalid_type")
    return value


def _enum(value: Any, allowed: Sequence[str], param: str) -> str:
    expected = " | ".join(f"'{option}'" for option in allowed)
    if value is _ABSENT:
        raise Rejected("Required", param, "invalid_type")
    if not isinstance(value, str):
        raise Rejected(f"Expected {expected}, received {_zod_type(value)}", param, "invalid_type")
    if value not in allowed:
        raise Rejected(f"Invalid enum value. Expected {expected}, received '{value}'", param, "invalid_enum_value")
    return value


def _input_item(i: int, item: Any, faults: frozenset[str]) -> list[dict[str, Any]]:
    """The chat messages an input item stands for: one for most items; none for a reasoning item, which clients that
    keep their own history send back with the rest of the output, and which the model does not read; the whole
    conversation a compaction item holds (the output of `POST /v1/responses/compact`, sent back in its place)."""
    param = f"input.{i}"
    if not isinstance(item, dict):
        raise Rejected(f"Expected object, received {_zod_type(item)}", param, "invalid_type")
    kind = item.get("type", "message")
    if kind == "message":
        role = _enum(item.get("role", _ABSENT), ROLES, f"{param}.role")
        return [{"role": role, "content": _message_text(item.get("content", _ABSENT), f"{param}.content")}]
    if kind == "function_call":
        call_id, name, arguments = (_field(item, key, "string", f"{param}.{key}", required=True)
                                    for key in ("call_id", "name", "arguments"))
        return [call_message(call_id, chat_name(_field(item, "namespace", "string", f"{param}.namespace"), name),
                             arguments)]
    if kind == "custom_tool_call":
        call_id, name, given = (_field(item, key, "string", f"{param}.{key}", required=True)
                                for key in ("call_id", "name", "input"))
        return [call_message(call_id, name, json.dumps({"input": given}))]
    if kind in ("function_call_output", "custom_tool_call_output"):
        if FUNCTION_CALL_OUTPUT_REJECTED in faults:
            raise Rejected(f"Unsupported input item type: '{kind}'.", "input", "unsupported_value")
        call_id = _field(item, "call_id", "string", f"{param}.call_id", required=True)
        return [{"role": "tool", "tool_call_id": call_id,
                 "content": _field(item, "output", "string", f"{param}.output", required=True)}]
    if kind == "reasoning":
        return []
    if kind == "compaction" and COMPACTION_INPUT_REFUSED not in faults:
        if COMPACTION_INPUT_500 in faults:
            raise Rejected("Internal server error", None, None, 500)
        conversation = compacted(_field(item, "encrypted_content", "string", f"{param}.encrypted_content",
                                        required=True), param)
        return [] if COMPACTION_INPUT_FORGOTTEN in faults else conversation
    types = [option for option in ITEM_TYPES if option != "compaction" or COMPACTION_INPUT_REFUSED not in faults]
    expected = " | ".join(f"'{option}'" for option in types)
    raise Rejected(f"Invalid discriminator value. Expected {expected}", f"{param}.type", "invalid_union_discriminator")


def compacted(opaque: str, param: str) -> list[dict[str, Any]]:
    """The conversation a compaction item's `encrypted_content` holds (what compaction_object wrote), or Rejected as
    OpenAI refuses content it did not write."""
    try:
        conversation = json.loads(base64.b64decode(opaque, validate=True))
    except ValueError:
        conversation = None
    if not isinstance(conversation, list) or not all(isinstance(message, dict) and message.get("role") in
                                                     (*ROLES, "tool") for message in conversation):
        raise Rejected(f"The encrypted content for item {param} could not be verified.", f"{param}.encrypted_content",
                       "invalid_encrypted_content")
    return conversation


def _message_text(content: Any, param: str) -> str:
    if isinstance(content, str):
        return content
    if content is _ABSENT:
        raise Rejected("Required", param, "invalid_type")
    if not isinstance(content, list):
        raise Rejected("Invalid input", param, "invalid_union")
    for j, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") in ATTACHMENT_SOURCES:
            _attachment(part, f"{param}.{j}")
            continue
        if not isinstance(part, dict) or part.get("type") not in TEXT_PARTS or not isinstance(part.get("text"), str):
            raise Rejected("Invalid input", f"{param}.{j}", "invalid_union")
    return content_text(content)


def _attachment(part: dict[str, Any], param: str) -> None:
    """An image or file part as OpenAI takes it: one of its sources, a URL where it is one, and a known `detail`."""
    sources = ATTACHMENT_SOURCES[part["type"]]
    given = {key: _field(part, key, "string", f"{param}.{key}") for key in sources}
    if all(value is None for value in given.values()):
        raise Rejected(f"One of {', '.join(sources)} is required.", f"{param}.{sources[0]}", "missing_required_parameter")
    for key in ("image_url", "file_url", "file_data"):
        if given.get(key) is not None and not given[key].startswith(URL_SCHEMES if key != "file_data" else "data:"):
            raise Rejected(f"Invalid {key}: expected a URL or a base64 data URL, got {given[key][:40]!r}.",
                           f"{param}.{key}", "invalid_value")
    if part.get("detail") is not None:
        _enum(part["detail"], IMAGE_DETAILS, f"{param}.detail")


def chat_name(namespace: str | None, name: str) -> str:
    """The name the chat model knows a function by: a namespace's functions are one list of tools to it."""
    return f"{namespace}__{name}" if namespace else name


def _tool(i: int, tool: Any, faults: frozenset[str]) -> dict[str, Any]:
    """A valid tool of a type OpenAI takes: a flattened function (the chat form fails at the missing `name`, word for
    word as LM Studio reports it), a namespace of them, a custom tool, or a hosted one."""
    param = f"tools.{i}"
    if not isinstance(tool, dict):
        raise Rejected(f"Expected object, received {_zod_type(tool)}", param, "invalid_type")
    kind = tool.get("type")
    known = ("function", "mcp") if FUNCTION_TOOLS_ONLY in faults else (*CALLED_TOOL_TYPES, *HOSTED_TOOL_TYPES)
    if kind not in known:
        expected = " | ".join(f"'{option}'" for option in known)
        raise Rejected(f"Invalid discriminator value. Expected {expected}", f"{param}.type",
                       "invalid_union_discriminator")
    if kind == "namespace":
        _named(tool, param)
        functions = _field(tool, "tools", "array", f"{param}.tools", required=True)
        for j, function in enumerate(functions):
            if not isinstance(function, dict) or function.get("type") != "function":
                raise Rejected("Invalid discriminator value. Expected 'function'", f"{param}.tools.{j}.type",
                               "invalid_union_discriminator")
            _function(f"{param}.tools.{j}", function, faults)
        return tool
    if kind == "custom":
        _named(tool, param)
        _custom_format(_field(tool, "format", "object", f"{param}.format"), f"{param}.format")
        return tool
    if kind == "mcp":
        _field(tool, "server_label", "string", f"{param}.server_label", required=True)
    if kind in HOSTED_TOOL_TYPES:
        return tool
    return _function(param, tool, faults)


def _named(tool: dict[str, Any], param: str) -> None:
    if not _field(tool, "name", "string", f"{param}.name", required=True):
        raise Rejected("String must contain at least 1 character(s)", f"{param}.name", "too_small")


def _custom_format(given: dict[str, Any] | None, param: str) -> None:
    """A custom tool's input is free text, or text of a grammar (Lark or a regular expression) given whole."""
    if given is None or _enum(given.get("type", _ABSENT), CUSTOM_FORMATS, f"{param}.type") == "text":
        return
    _enum(given.get("syntax", _ABSENT), GRAMMAR_SYNTAXES, f"{param}.syntax")
    _field(given, "definition", "string", f"{param}.definition", required=True)


def _function(param: str, tool: dict[str, Any], faults: frozenset[str]) -> dict[str, Any]:
    if FLATTENED_TOOLS_REJECTED in faults and not is_nested_tool(tool):
        raise Rejected("Required", f"{param}.function", "invalid_type")
    _named(tool, param)
    _field(tool, "description", "string", f"{param}.description")
    parameters = _field(tool, "parameters", "object", f"{param}.parameters")
    if parameters == {} and EMPTY_PARAMETERS_REJECTED in faults:
        raise Rejected("Invalid input", param, "custom")
    return tool


def _tool_choice(choice: Any, tools: list[dict[str, Any]], faults: frozenset[str]) -> str | dict[str, Any]:
    if choice is None:
        return "auto"
    if choice in TOOL_CHOICES:
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        if choice["name"] not in {tool.get("name") for tool in tools} and UNKNOWN_TOOL_CHOICE_ACCEPTED not in faults:
            raise Rejected(f"Tool choice '{choice['name']}' not found in 'tools' parameter.", "tool_choice",
                           "invalid_value")
        return choice
    raise Rejected("Invalid input", "tool_choice", "invalid_union")
