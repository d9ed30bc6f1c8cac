"""What the real openai Python SDK makes of a captured chat stream.

Nothing is emulated here: the installed `openai` package reads the captured status, headers and body through
`httpx2.MockTransport`, read by read as the network delivered them, and its `chat.completions.stream()`
helper (lib/streaming/chat/_completions.py: `ChatCompletionStreamState`, which accumulates tool calls by
index and asserts on what it does not expect) consumes every event before `get_final_completion()`.
Whatever the SDK raises is the verdict.
"""

from __future__ import annotations

import inspect
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from openai.resources.chat.completions import Completions

from lmconform.wire.exchange import Exchange

# The body was stored as the client library handed it over, already de-chunked and decompressed; the replay
# frames it itself, so headers describing the wire encoding would make the SDK decode it a second time.
_WIRE_ENCODING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})

# The helper's keyword arguments that name request body fields (the rest configure the call itself).
_BODY_FIELDS = frozenset(inspect.signature(Completions.stream).parameters) - {
    "self", "extra_headers", "extra_query", "extra_body", "timeout"
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


def replay_chat_stream(request_body: dict[str, Any], exchange: Exchange) -> SdkOutcome:
    """Replay `exchange` as the answer to `request_body`, the JSON body the suite sent."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if exchange.status is None:
            if exchange.error_kind in ("timeout", "deadline"):
                raise httpx2.ReadTimeout(exchange.error or "timed out", request=request)
            raise httpx2.ConnectError(exchange.error or "no answer", request=request)
        headers = [(k, v) for k, v in exchange.headers.items() if k.lower() not in _WIRE_ENCODING_HEADERS]
        return httpx2.Response(exchange.status, headers=headers, stream=_Reads(exchange), request=request)

    client = openai.OpenAI(
        api_key="replay",
        base_url="http://replay.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    stream = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with client.chat.completions.stream(**_helper_params(request_body)) as stream:
                for _ in stream:
                    pass
                completion = stream.get_final_completion()
            raised = None
        except Exception as exc:  # noqa: BLE001 — every exception the SDK raises is the verdict
            completion, raised = _snapshot(stream), _describe(exc)
        finally:
            client.close()
    return _outcome(completion, raised, tuple(dict.fromkeys(str(w.message) for w in caught)))


class _Reads(httpx2.SyncByteStream):
    def __init__(self, exchange: Exchange) -> None:
        self._chunks = [chunk.data for chunk in exchange.chunks]

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def _helper_params(request_body: dict[str, Any]) -> dict[str, Any]:
    """The request's fields the helper takes by name. `stream` is the helper's own business, and fields it does
    not know cannot change how it reads the response."""
    params = {k: v for k, v in request_body.items() if k in _BODY_FIELDS}
    # The helper reads `tools` and `response_format` again while it reads the response (to find a strict
    # tool by name, or a class to parse content into). A malformed one would crash it there and blame the
    # response for the request, so it reads the response as if they had not been sent.
    if not _readable_tools(params.get("tools", [])):
        del params["tools"]
    if not isinstance(params.get("response_format", {}), dict):
        del params["response_format"]
    params.setdefault("messages", [])
    if not isinstance(params.get("model"), str):
        params["model"] = "replay"
    return params


def _readable_tools(tools: Any) -> bool:
    return isinstance(tools, list) and all(
        isinstance(tool, dict)
        and "type" in tool
        and (tool["type"] != "function" or isinstance(tool.get("function"), dict))
        for tool in tools
    )


def _describe(exc: Exception) -> str:
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
