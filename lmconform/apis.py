"""The APIs lmconform speaks, in one table: where each is reached, how its answers become the generation
vocabulary, which field caps its output, and which keys of its answers are enumerations clients branch on.

Every list of APIs in lmconform reads this table: the cases folders (`<name>/` beside lmconform.cases), the
suites' test functions, the recorder, the proxy gate, scope rules and shape snapshots. Adding an API is an
entry here, a normaliser in lmconform.normalize and its cases; tests/test_apis.py fails when one is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lmconform.normalize.chat import normalize_chat
from lmconform.normalize.events import Generation
from lmconform.normalize.responses import continuation, normalize_responses, response_id
from lmconform.normalize.vscodelm import CHAT_RESPONSE, normalize_vscodelm
from lmconform.target import HTTP, STDIO
from lmconform.wire.exchange import Exchange

Normaliser = Callable[[Exchange], Generation]
# A further turn's body: from the request's body, the turn's own fields, the previous answer's id (or None) and
# (call id, output) when the turn answers a function call.
Continuation = Callable[[dict, dict, "str | None", "tuple[str, str] | None"], dict]


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
    # For an API that continues conversations server-side: how a case's further turns are built, and the id of an
    # answer that a later turn continues.
    continuation: Continuation | None = None
    answer_id: Callable[[Exchange], str | None] | None = None
    model_field: str = "model"  # the request field the target's model fills in
    tools_at: tuple[str, ...] = ("tools",)  # where a request lists its tools

    @property
    def generates(self) -> bool:
        return self.normaliser is not None

    @property
    def slug(self) -> str:
        """The endpoint in a file name: `/v1/chat/completions` → `chat-completions`."""
        return self.path.removeprefix("/v1/").replace("/", "-")


APIS: dict[str, Api] = {api.name: api for api in (
    Api("chat", "Chat completions", HTTP, "POST", "/v1/chat/completions", normalize_chat, "max_tokens",
        frozenset({"object", "role", "finish_reason", "type"})),
    Api("models", "Model list", HTTP, "GET", "/v1/models"),
    Api("responses", "Responses", HTTP, "POST", "/v1/responses", normalize_responses, "max_output_tokens",
        frozenset({"object", "role", "status", "type"}), continuation, response_id),
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
