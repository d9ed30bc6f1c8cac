"""What the real anthropic Python SDK makes of a captured Messages stream.

Nothing is emulated: the installed `anthropic` package reads the captured status, headers and body through
`httpx2.MockTransport`, read by read as the network delivered them, and its stream helper
(`messages.stream()`, lib/streaming/_messages.py: `MessageStream`, whose `accumulate_event` appends each started
block, addresses deltas by index, re-parses the tool input after every fragment and asserts that a message
started) consumes every event; `get_final_message()` then hands over the message. Whatever the SDK raises is the
verdict, in its own words.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic.resources.messages import Messages

from lmconform.clients.openai_python import describe_exception, sdk_warnings
from lmconform.wire.http import HttpExchange

# The body was stored as the client library handed it over, already de-chunked and decompressed.
_WIRE_ENCODING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
# Keyword arguments of the helper that configure the call rather than name a request field; `output_format` is a
# Python class, never part of a JSON body.
_CALL_OPTIONS = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout", "output_format"})
_FIELDS = frozenset(inspect.signature(Messages.stream).parameters) - _CALL_OPTIONS


@dataclass(frozen=True)
class SdkToolUse:
    """A tool_use block as the SDK hands it over; `input` is None when the block has none at all."""

    id: str | None
    name: str | None
    input: Any


@dataclass(frozen=True)
class SdkMessage:
    """The final message as `get_final_message()` returns it, or what the accumulator held when the SDK raised
    (empty when it held nothing). Values are what the SDK holds, unchecked."""

    sdk_version: str
    raised: str | None  # "ValueError: Unable to parse tool parameter JSON from model. …"
    text: str  # the text blocks joined
    thinking: str  # the thinking blocks joined
    tool_uses: tuple[SdkToolUse, ...]
    stop_reason: str | None
    warnings: tuple[str, ...] = ()


def replay_messages_stream(request_body: Any, exchange: HttpExchange) -> SdkMessage:
    """Replay `exchange` as the answer to `request_body`, the JSON body the suite sent to /v1/messages."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if exchange.status is None:
            if exchange.error_kind in ("timeout", "deadline"):
                raise httpx2.ReadTimeout(exchange.error or "timed out", request=request)
            raise httpx2.ConnectError(exchange.error or "no answer", request=request)
        headers = [(k, v) for k, v in exchange.headers.items() if k.lower() not in _WIRE_ENCODING_HEADERS]
        return httpx2.Response(exchange.status, headers=headers, stream=_Reads(exchange), request=request)

    client = anthropic.Anthropic(api_key="replay", base_url="http://replay.invalid", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    stream = message = None
    raised = None
    with sdk_warnings() as caught:
        try:
            with client.messages.stream(**_params(request_body)) as stream:
                for _ in stream:
                    pass
                message = stream.get_final_message()
        except Exception as exc:  # noqa: BLE001  (whatever the SDK raises is the verdict)
            raised = describe_exception(exc)
            message = _snapshot(stream)
        finally:
            client.close()
    return _outcome(message, raised, tuple(dict.fromkeys(str(w.message) for w in caught)))


class _Reads(httpx2.SyncByteStream):
    def __init__(self, exchange: HttpExchange) -> None:
        self._chunks = [chunk.data for chunk in exchange.chunks]

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


def _params(request_body: Any) -> dict[str, Any]:
    """The request's fields the helper takes by name; those it does not know cannot change how it reads the
    answer. The three it requires are filled in when the request lacked them."""
    body = request_body if isinstance(request_body, dict) else {}
    params = {key: value for key, value in body.items() if key in _FIELDS}
    params.setdefault("messages", [])
    if not isinstance(params.get("model"), str):
        params["model"] = "replay"
    if isinstance(params.get("max_tokens"), bool) or not isinstance(params.get("max_tokens"), int):
        params["max_tokens"] = 1
    return params


def _snapshot(stream: Any) -> Any:
    if stream is None:
        return None
    try:
        return stream.current_message_snapshot
    except (AssertionError, AttributeError):  # no message_start was accumulated
        return None


def _outcome(message: Any, raised: str | None, caught: tuple[str, ...]) -> SdkMessage:
    blocks = list(getattr(message, "content", None) or [])

    def joined(kind: str) -> str:
        parts = [getattr(block, kind, None) for block in blocks if getattr(block, "type", None) == kind]
        return "".join(part for part in parts if isinstance(part, str))

    uses = tuple(SdkToolUse(getattr(block, "id", None), getattr(block, "name", None), getattr(block, "input", None))
                 for block in blocks if getattr(block, "type", None) == "tool_use")
    return SdkMessage(sdk_version=anthropic.__version__, raised=raised, text=joined("text"),
                      thinking=joined("thinking"), tool_uses=uses, stop_reason=getattr(message, "stop_reason", None),
                      warnings=caught)
