"""The APIs lmconform speaks, in one table: where each is reached, how its answers become the generation
vocabulary, which field caps its output, and which keys of its answers are enumerations clients branch on.

Every list of APIs in lmconform reads this table: the cases folders (`<name>/` beside lmconform.cases), the
suites' test functions, the recorder, the proxy gate, scope rules and shape snapshots. Adding an API is an
entry here, a normaliser in lmconform.normalize and its cases; tests/test_apis.py fails when one is missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lmconform.normalize import messages, native_chat, responses
from lmconform.normalize.chat import normalize_chat
from lmconform.normalize.events import Generation
from lmconform.normalize.vscodelm import CHAT_RESPONSE, normalize_vscodelm
from lmconform.target import HTTP, STDIO
from lmconform.wire.exchange import Exchange

Normaliser = Callable[[Exchange], Generation]
# A further turn's body: from the request's body, the turn's own fields, the previous answer's id (or None), and
# when the turn answers a function call, (call id, output) and the answer that made the call (an API that keeps
# no conversation sends that answer back).
Continuation = Callable[[dict, dict, "str | None", "tuple[str, str] | None", "Exchange | None"], dict]


@dataclass(frozen=True)
class Api:
    name: str  # the cases folder and the first part of a case id: `chat/void-weather-tool`
    title: str
    transport: str  # how a case is sent: "http", or "stdio" (JSON-RPC to a process, lmconform.wire.stdio)
    method: str  # where its cases go, unless a case says otherwise (over stdio: the JSON-RPC method)
    path: str  # "" over stdio
    # The answer in the generation vocabulary (lmconform.normalize), for APIs that answer with a generation.
    normaliser: Normaliser | None = None
    output_cap: str | None = None  # the request field a run's --max-tokens fills in
    # String fields whose values are enumerations clients branch on: kept, not masked, in shape snapshots.
    enumerations: frozenset[str] = frozenset({"object", "type"})
    # For an API whose cases have further turns: how a turn's body is built, and (for one that continues
    # conversations server-side) the id of an answer that a later turn continues.
    continuation: Continuation | None = None
    answer_id: Callable[[Exchange], str | None] | None = None
    model_field: str = "model"  # the request field the target's model fills in
    tools_at: tuple[str, ...] = ("tools",)  # where a request lists its tools

    @property
    def generates(self) -> bool:
        return self.normaliser is not None

    @property
    def slug(self) -> str:
        """The endpoint in a file name: `/v1/chat/completions` → `chat-completions`, `/api/v1/chat` → `chat`."""
        return re.sub(r"^/(api/)?v1/", "", self.path).replace("/", "-")


APIS: dict[str, Api] = {api.name: api for api in (
    Api("chat", "Chat completions", HTTP, "POST", "/v1/chat/completions", normalize_chat, "max_tokens",
        frozenset({"object", "role", "finish_reason", "type"})),
    Api("models", "Model list", HTTP, "GET", "/v1/models"),
    Api("responses", "Responses", HTTP, "POST", "/v1/responses", responses.normalize_responses,
        "max_output_tokens", frozenset({"object", "role", "status", "type"}), responses.continuation,
        responses.response_id),
    Api("messages", "Anthropic Messages", HTTP, "POST", "/v1/messages", messages.normalize_messages, "max_tokens",
        frozenset({"role", "stop_reason", "type"}), messages.continuation),
    Api("native_chat", "LM Studio native chat", HTTP, "POST", "/api/v1/chat", native_chat.normalize_native_chat,
        "max_output_tokens", frozenset({"type"}), native_chat.continuation, native_chat.response_id),
    # The VS Code language-model bridge protocol: newline-delimited JSON-RPC 2.0 on a process's stdio. A case's
    # turns are further messages to the same process; the history a chat turn carries is built in
    # lmconform.run.play_stdio.
    Api("vscodelm", "VS Code language-model bridge", STDIO, CHAT_RESPONSE, "", normalize_vscodelm, None,
        frozenset({"type", "role", "method", "jsonrpc", "toolMode"}), model_field="modelId",
        tools_at=("options", "tools")),
)}


def api_of(name: str) -> Api:
    """The table entry of an API by name; a name the table lacks is a programming error, said plainly."""
    if name not in APIS:
        raise KeyError(f"no API {name!r} in lmconform.apis.APIS (known: {', '.join(APIS)})")
    return APIS[name]
