"""What the real openai Python SDK makes of a captured stream.

Nothing is emulated here: the installed `openai` package reads the captured status, headers and body through
`httpx2.MockTransport`, read by read as the network delivered them, and one of its stream helpers consumes every
event before handing over its final result. Whatever the SDK raises is the verdict.

- `replay_chat_stream`: `chat.completions.stream()` (lib/streaming/chat/_completions.py:
  `ChatCompletionStreamState`, which accumulates tool calls by index and asserts on what it does not expect),
  then `get_final_completion()`.
- `replay_responses_stream`: `responses.stream()` (lib/streaming/responses/_responses.py: `ResponseStreamState`,
  which files every event under its `output_index` and raises on events it cannot place), then
  `get_final_response()`.
"""

from __future__ import annotations

import inspect
import json
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from openai.resources.chat.completions import Completions
from openai.resources.responses import Responses

from lmconform.wire.http import HttpExchange

# The body was stored as the client library handed it over, already de-chunked and decompressed; the replay
# frames it itself, so headers describing the wire encoding would make the SDK decode it a second time.
_WIRE_ENCODING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})

# Keyword arguments of a helper that configure the call itself rather than name a request body field.
_CALL_OPTIONS = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})

_CHAT_FIELDS = frozenset(inspect.signature(Completions.stream).parameters) - _CALL_OPTIONS
# `response_id` and `starting_after` would make the helper fetch a stored response instead of creating one, and it
# refuses them next to any request field; `text_format` is a Python class, never part of a JSON body.
_RESPONSES_FIELDS = frozenset(inspect.signature(Responses.stream).parameters) - _CALL_OPTIONS - {
    "response_id", "starting_after", "text_format"
}


@dataclass(frozen=True)
class SdkToolCall:
    """A tool call as the SDK hands it to its caller. The helper does not check types: `arguments` sent as a
    JSON object comes back as a dict, whatever the SDK's annotation says."""

    index: int | None  # None when the server sent no index
    id: str | None
    name: str | None
    arguments: str | None


@dataclass(frozen=True)
class SdkOutcome:
    """The first choice of the final completion; if the SDK raised, what it had accumulated by then. Values are
    what the SDK holds, unchecked: content sent as an array comes back as a list."""

    sdk_version: str
    raised: str | None  # "TypeError: ..." — the exception's type and message
    text: str
    tool_calls: tuple[SdkToolCall, ...]
    finish_reason: str | None
    warnings: tuple[str, ...] = ()  # what the SDK warned about (pydantic's serializer notices bad types)


@dataclass(frozen=True)
class SdkFunctionCall:
    """A `function_call` output item of the final response, unchecked like `SdkToolCall`."""

    call_id: str | None
    name: str | None
    arguments: str | None


@dataclass(frozen=True)
class SdkResponsesOutcome:
    """The final response as `get_final_response()` returns it. The helper hands over nothing until the
    stream has ended with `response.completed`, so when it raised, `text`, `function_calls` and `status` are
    empty: its caller gets nothing either. `output_text` can raise after that (on text that is not a string);
    then only `text` is empty."""

    sdk_version: str
    raised: str | None  # "RuntimeError: ..." — the exception's type and message
    text: str  # `response.output_text`
    function_calls: tuple[SdkFunctionCall, ...]
    status: str | None
    event_types: tuple[str, ...]  # what the helper yielded, in order, up to where it raised; None if untyped
    warnings: tuple[str, ...] = ()


@dataclass
class _Replay:
    client: openai.OpenAI
    raised: str | None = None
    warnings: tuple[str, ...] = ()


def replay_chat_stream(request_body: dict[str, Any], exchange: HttpExchange) -> SdkOutcome:
    """Replay `exchange` as the answer to `request_body`, the JSON body the suite sent."""
    stream = completion = None
    with _replayed(exchange) as replay:
        with replay.client.chat.completions.stream(**_chat_params(request_body)) as stream:
            for _ in stream:
                pass
            completion = stream.get_final_completion()
    if replay.raised is not None:
        completion = _snapshot(stream)
    return _outcome(completion, replay.raised, replay.warnings)


def replay_responses_stream(request_body: dict[str, Any], exchange: HttpExchange) -> SdkResponsesOutcome:
    """Replay `exchange` as the answer to `request_body`, the JSON body the suite sent to /v1/responses."""
    event_types: list[str] = []
    response = None
    text = ""
    with _replayed(exchange) as replay:
        with replay.client.responses.stream(**_responses_params(request_body)) as stream:
            for event in stream:
                event_types.append(event.type)
            response = stream.get_final_response()
        # Inside the replay: `output_text` joins the text parts as the server sent them, and a caller's first
        # read of the response raises if one is not a string.
        text = response.output_text
    calls = tuple(
        SdkFunctionCall(call_id=getattr(item, "call_id", None), name=getattr(item, "name", None),
                        arguments=_sdk_arguments(item))
        for item in getattr(response, "output", None) or []
        if getattr(item, "type", None) in ("function_call", "custom_tool_call")
    )
    return SdkResponsesOutcome(
        sdk_version=openai.__version__,
        raised=replay.raised,
        text=text,
        function_calls=calls,
        status=getattr(response, "status", None),
        event_types=tuple(event_types),
        warnings=replay.warnings,
    )


def _sdk_arguments(item: Any) -> str | None:
    """A call's arguments as the SDK shows them; a custom tool's `input` as the generation reads it, the one argument
    of a function of one string (`{"input": …}`), so that both sides compare alike."""
    if getattr(item, "type", None) != "custom_tool_call":
        return getattr(item, "arguments", None)
    given = getattr(item, "input", None)
    return json.dumps({"input": given}, ensure_ascii=False) if isinstance(given, str) else None


@contextmanager
def _replayed(exchange: HttpExchange) -> Iterator[_Replay]:
    """A client whose every request is answered by `exchange`. Whatever the block raises is recorded in the
    yielded `_Replay` and goes no further: every exception the SDK raises is the verdict."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if exchange.status is None:
            if exchange.error_kind in ("timeout", "deadline"):
                raise httpx2.ReadTimeout(exchange.error or "timed out", request=request)
            raise httpx2.ConnectError(exchange.error or "no answer", request=request)
        headers = [(k, v) for k, v in exchange.headers.items() if k.lower() not in _WIRE_ENCODING_HEADERS]
        return httpx2.Response(exchange.status, headers=headers, stream=_Reads(exchange), request=request)

    replay = _Replay(openai.OpenAI(
        api_key="replay",
        base_url="http://replay.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    ))
    with sdk_warnings() as caught:
        try:
            yield replay
        except Exception as exc:  # noqa: BLE001
            replay.raised = describe_exception(exc)
        finally:
            replay.client.close()
            replay.warnings = tuple(dict.fromkeys(str(w.message) for w in caught))


class _Reads(httpx2.SyncByteStream):
    def __init__(self, exchange: HttpExchange) -> None:
        self._chunks = [chunk.data for chunk in exchange.chunks]

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def _chat_params(request_body: dict[str, Any]) -> dict[str, Any]:
    """The request's fields the chat helper takes by name. `stream` is the helper's own business, and fields it
    does not know cannot change how it reads the response."""
    params = _named_params(request_body, _CHAT_FIELDS, "messages")
    # The helper reads `tools` and `response_format` again while it reads the response (to find a strict
    # tool by name, or a class to parse content into). A malformed one would crash it there and blame the
    # response for the request, so it reads the response as if they had not been sent.
    if not _readable_tools(params.get("tools", []), _readable_chat_tool):
        del params["tools"]
    if not isinstance(params.get("response_format", {}), dict):
        del params["response_format"]
    return params


def _responses_params(request_body: dict[str, Any]) -> dict[str, Any]:
    """The request's fields the Responses helper takes by name, as for `_chat_params`."""
    params = _named_params(request_body, _RESPONSES_FIELDS, "input")
    # The helper converts `tools` before it sends anything (refusing the chat shape `{type, function}`), and
    # looks them up again by name when `response.completed` arrives (to parse a strict tool's arguments).
    if not _readable_tools(params.get("tools", []), _readable_responses_tool):
        del params["tools"]
    return params


def _named_params(request_body: dict[str, Any], fields: frozenset[str], conversation: str) -> dict[str, Any]:
    params = {k: v for k, v in request_body.items() if k in fields}
    params.setdefault(conversation, [])
    if not isinstance(params.get("model"), str):
        params["model"] = "replay"
    return params


def _readable_tools(tools: Any, readable_tool: Callable[[dict[str, Any]], bool]) -> bool:
    return isinstance(tools, list) and all(
        isinstance(tool, dict) and "type" in tool and readable_tool(tool) for tool in tools
    )


def _readable_chat_tool(tool: dict[str, Any]) -> bool:
    return tool["type"] != "function" or isinstance(tool.get("function"), dict)


def _readable_responses_tool(tool: dict[str, Any]) -> bool:
    if tool["type"] == "function":
        return "function" not in tool
    if tool["type"] == "namespace":
        return "name" in tool and _readable_tools(tool.get("tools"), lambda nested: (
            nested["type"] != "function" or "name" in nested
        ))
    return True


@contextmanager
def sdk_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """The warnings an SDK gives while it reads an answer (pydantic's serializer notices a member of the wrong type).
    A ResourceWarning is none of them: the garbage collector raises it for whatever unclosed socket it finalises at
    that moment, anywhere in the process, so it says nothing of the answer."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", ResourceWarning)
        yield caught


def describe_exception(exc: Exception) -> str:
    text = str(exc)
    if text:
        return f"{type(exc).__name__}: {text}"
    # A bare `assert` says nothing; where it failed says which expectation the stream broke.
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = frame.filename.rpartition("site-packages/")[2]
    return f"{type(exc).__name__} at {where}:{frame.lineno}: {frame.line}"


def _snapshot(stream: Any) -> Any:
    if stream is None:
        return None
    try:
        return stream.current_completion_snapshot
    except AssertionError:  # no chunk was accumulated
        return None


def _outcome(completion: Any, raised: str | None, caught: tuple[str, ...]) -> SdkOutcome:
    choice = completion.choices[0] if completion is not None and completion.choices else None
    message = choice.message if choice is not None else None
    calls = tuple(
        SdkToolCall(
            index=getattr(call, "index", None),
            id=call.id,
            name=call.function.name if call.function is not None else None,
            arguments=call.function.arguments if call.function is not None else None,
        )
        for call in (message.tool_calls if message is not None else None) or []
    )
    return SdkOutcome(
        sdk_version=openai.__version__,
        raised=raised,
        text=(message.content if message is not None else None) or "",
        tool_calls=calls,
        finish_reason=choice.finish_reason if choice is not None else None,
        warnings=caught,
    )
