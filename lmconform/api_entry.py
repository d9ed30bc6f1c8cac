"""What the table says of an API (`Api`, the entry each API's folder declares as `API`), and how the rest of
lmconform reaches the rooms an API brings (`Api.room`). Nothing here imports any other part of lmconform: the
entries stand on the ground floor, so that every floor can read the table."""

from __future__ import annotations

import importlib
import importlib.util
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType

HTTP, STDIO = "http", "stdio"  # the transports a case may be sent over
FOLDER = Path(__file__).resolve().parent / "apis"  # one folder an API: lmconform/apis/<name>/


@dataclass(frozen=True)
class Api:
    name: str  # its folder, and the first part of a case id: `chat/void-weather-tool`
    title: str  # what reports call it: "Anthropic Messages"
    transport: str  # how a case is sent: HTTP, or STDIO (JSON-RPC to a process, lmconform.wire.stdio)
    method: str  # where its cases go, unless a case says otherwise (over stdio: the JSON-RPC method)
    path: str  # "" over stdio
    output_cap: str | None = None  # the request field a run's --max-tokens fills in
    # String fields whose values are enumerations clients branch on: kept, not masked, in shape snapshots.
    enumerations: frozenset[str] = frozenset({"object", "type"})
    model_field: str = "model"  # the request field the target's model fills in
    tools_at: tuple[str, ...] = ("tools",)  # where a request lists its tools
    format_at: tuple[str, ...] = ()  # where a request names its output's format (the `type` inside it), if it can
    format_schema_at: tuple[str, ...] = ()  # inside that format, where a `json_schema` format holds its JSON Schema
    # Inside one of its tools: where the tool's name and its arguments' JSON Schema are, and the flag that binds a
    # call's arguments to that schema (`strict`); `tool_schemas_bind`: every tool's schema binds its calls, strict
    # or not (Anthropic's `input_schema`).
    tool_name_at: tuple[str, ...] = ("name",)
    tool_schema_at: tuple[str, ...] = ()
    tool_strict_at: tuple[str, ...] = ()
    tool_schemas_bind: bool = False
    ends_with_done: bool = False  # its event streams end with `data: [DONE]`, as OpenAI's chat completions do
    # Its answers carry a model's reasoning in a channel of their own (a member, an item, a block, an event), so that
    # reasoning in the answer's text is a defect; a raw text completion has no such channel.
    reasoning_channel: bool = False
    # The clients lmconform replays its answers through, by the surface of their checks (`client.void`), each with
    # the name reports give it ("Void").
    clients: dict[str, str] = field(default_factory=dict, hash=False)
    # A target may not offer it: its cases name the API as their `feature`, and a target without its route gets
    # UNSUPPORTED for them, not FAILED.
    optional: bool = False
    noun: str = "response"  # what a request of it is called in the description of a recorded case
    stored_path: str | None = None  # where the server gives back one of its answers by id, if it keeps them
    # How a request asks for its text's log probabilities in OpenAI's per-token form, when it can: the field and
    # the value it holds, or holds among others when it is a list.
    logprobs_asked: tuple[str, object] | None = None
    # Its cases show the faults of the HTTP framing (status, content type, SSE bytes) in the proxy gate: the streams
    # those faults change, and the routes' own answers (the model list, a route no server serves).
    shows_http_faults: bool = False
    # The request field by which a later request continues one of its answers kept by the server, where the
    # recorder makes such a request a further turn of the first one's case (lmconform.record.recorder).
    recorded_chain: str | None = None
    # What LM Studio documents of it (--profile lmstudio): the version its route arrived in, in the changelog's words
    # (a target held to an older one gets UNSUPPORTED for its cases), and the error body its route answers with
    # ("string": `{"error": "…"}`, "object": OpenAI's error object).
    lmstudio_since: tuple[tuple[int, ...], str] | None = None
    lmstudio_errors: str | None = None
    # Its checks that belong to an area a reader asks about across APIs, by the prefix of their ids: the "will it work?"
    # headline gathers "Tool calls" and "Chaining" from every API that declares them (lmconform.verdicts.headline).
    topics: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    # The schema of each kind of payload (lmconform.schemas.KINDS: "request", "body", "event", "error"), as a path
    # relative to the API's `schemas/` folder, as a `$ref` in it would say it: what the schema checks validate with.
    schemas: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def folder(self) -> Path:
        return FOLDER / self.name

    @property
    def refs(self) -> dict[str, str]:
        """The public sources its checks cite, by name (its folder's `refs.toml`; none when it has none)."""
        return _refs(self.folder / "refs.toml")

    @property
    def slug(self) -> str:
        """The endpoint in a file name: `/v1/chat/completions` → `chat-completions`, `/api/v1/chat` → `chat`."""
        return re.sub(r"^/(api/)?v1/", "", self.path).replace("/", "-")

    def room(self, room: str) -> ModuleType | None:
        """The module this API brings for a room of lmconform (`normalize`, `checks`, `reference.door`…), imported
        on first use; None when it brings none. The caller stands on the room's floor or above it:
        tests/test_architecture.py reads every call, so `room` takes the room's name as written, never computed."""
        return _module(f"lmconform.apis.{self.name}.{room}")


@cache
def _refs(path: Path) -> dict[str, str]:
    return tomllib.loads(path.read_text()) if path.is_file() else {}


@cache
def _module(name: str) -> ModuleType | None:
    """The module of this name, or None when there is none. Kept once found: a run asks for the same room of the
    same API for every generated example, and looking a module up on the path each time was a run's hot spot."""
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError:  # a package the API does not bring (`reference` of an API without a door)
        return None
    return importlib.import_module(name) if found is not None else None
