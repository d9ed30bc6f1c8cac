"""`lmconform openapi`: an OpenAPI 3.1 document of the API lmconform checks, assembled from lmconform/schemas, so that
other tools (schemathesis, Prism, client generators) can be pointed at the same schemas the suite judges with.

Each schema file becomes a component (`chat/chunk.json` → `chat.chunk`), its `$ref`s rewritten to point into
`#/components/schemas`, anchors replaced by the JSON pointers they name. The paths come from the table of APIs: each
operation's request body, its JSON answer, its event stream (`text/event-stream`; OpenAPI 3.1 has no schema for one
event, so the schema of each `data:` payload is named by `x-lmconform-event-schema`) and its error bodies. The
levels stay in the schemas as `x-lmconform-level`; `--level MUST` keeps only what breaks clients, dropping every
subschema graded more leniently, which is what a tool that treats every constraint as a failure should be given.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from lmconform import __version__
from lmconform.api_table import APIS
from lmconform.exit_status import USAGE_ERROR
from lmconform.files import write_json_atomically
from lmconform.schemas import BASE_URI, LEVEL_KEY, PAYLOAD_SCHEMAS, PROFILE_OVERLAYS, schema_set
from lmconform.schemas.documents import anchor_pointer
from lmconform.vocabulary import Level

COMPONENTS = "#/components/schemas/"
LEVELS = (Level.MUST, Level.SHOULD, Level.INFO)  # strictest first
DROPPED_KEYS = ("$id", "$schema", "$anchor")


def component_name(uri: str) -> str:
    """`https://…/schemas/chat/chunk.json` → `chat.chunk`."""
    return uri.removeprefix(BASE_URI).removesuffix(".json").replace("/", ".")


def _component(node: Any, base: str, documents: dict[str, dict], keep: tuple[Level, ...]) -> Any:
    """`node` of the document `base` as a component: refs into components, no ids or anchors, and every subschema
    graded at a level not in `keep` replaced by `true` (a finding below it could only be of that level)."""
    if isinstance(node, dict):
        if node.get(LEVEL_KEY) in Level.__members__ and Level(node[LEVEL_KEY]) not in keep:
            return True
        result = {}
        for key, value in node.items():
            if key in DROPPED_KEYS:
                continue
            if key == "$ref" and isinstance(value, str):
                result[key] = _reference(value, base, documents)
            elif key in ("const", "enum", "default", "examples"):
                result[key] = value
            else:
                result[key] = _component(value, base, documents, keep)
        return result
    if isinstance(node, list):
        return [_component(item, base, documents, keep) for item in node]
    return node


def _reference(ref: str, base: str, documents: dict[str, dict]) -> str:
    uri, _, fragment = urljoin(base, ref).partition("#")
    if uri not in documents:
        raise ValueError(f"{base}: $ref {ref!r} names no schema")
    pointer = fragment if fragment.startswith("/") or not fragment else anchor_pointer(documents[uri], fragment)
    if pointer is None:
        raise ValueError(f"{base}: $ref {ref!r} names no anchor")
    return COMPONENTS + component_name(uri) + pointer


def _ref(api: str, kind: str) -> dict[str, str]:
    return {"$ref": COMPONENTS + component_name(BASE_URI + PAYLOAD_SCHEMAS[(api, kind)])}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(api: str) -> dict[str, Any]:
    entry = APIS[api]
    answer = _json(_ref(api, "body"), f"{entry.title}: the answer")
    if (api, "event") in PAYLOAD_SCHEMAS:
        answer["description"] += " (a JSON body; with `stream: true`, an event stream)"
        answer["content"]["text/event-stream"] = {
            "schema": {"type": "string", "description": "Server-sent events; each `data:` line but `[DONE]` is a JSON "
                                                        "document valid against x-lmconform-event-schema."},
            "x-lmconform-event-schema": _ref(api, "event"),
        }
    operation: dict[str, Any] = {
        "operationId": entry.slug.replace("-", "_"),
        "summary": entry.title,
        "responses": {"200": answer, "4XX": _json(_ref(api, "error"), "The request was refused"),
                      "5XX": _json(_ref(api, "error"), "The server failed")},
    }
    if (api, "request") in PAYLOAD_SCHEMAS:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(api, "request")}}}
    return operation


def _stored(api: str) -> dict[str, Any]:
    """Reading back an answer the server keeps, by the id its path names."""
    entry = APIS[api]
    found = re.search(r"\{([a-z_]+)\}", entry.stored_path or "")
    if found is None:
        raise ValueError(f"{api} keeps no answer to read back by an id in its path")
    parameter = found[1]
    return {"operationId": f"get_{entry.slug.replace('-', '_')}", "summary": f"{entry.title}: a stored answer, by id",
            "parameters": [{"name": parameter, "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": _json(_ref(api, "body"), "The stored answer"),
                          "4XX": _json(_ref(api, "error"), "No such answer")}}


def document(profile: str | None = None, level: Level = Level.INFO) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the schemas as `profile` reads them, with the requirements down to `level`."""
    documents = schema_set(profile).documents
    keep = LEVELS[: LEVELS.index(level) + 1]
    paths: dict[str, dict[str, Any]] = {}
    for api, entry in APIS.items():
        if (api, "body") in PAYLOAD_SCHEMAS:  # an API whose answers have no schema yet has no operation here
            paths.setdefault(entry.path, {})[entry.method.lower()] = _operation(api)
    for api, entry in APIS.items():
        if entry.stored_path:
            paths[entry.stored_path] = {"get": _stored(api)}
    return {
        "openapi": "3.1.0",
        "info": {"title": "OpenAI-compatible API as LM Studio serves it (lmconform's schemas)", "version": __version__,
                 "description": f"Assembled by lmconform {__version__} from its wire schemas; profile "
                                f"{profile or 'none (OpenAI and Open Responses)'}, requirements down to {level}. "
                                f"Each requirement carries its level in x-lmconform-level."},
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "servers": [{"url": "http://localhost:1234", "description": "LM Studio's default address"}],
        "security": [{}, {"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {component_name(uri): _component(schema, uri, documents, keep)
                        for uri, schema in sorted(documents.items())},
        },
    }


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("openapi", help="write an OpenAPI 3.1 document assembled from lmconform's schemas")
    parser.add_argument("-o", "--output", type=Path, metavar="PATH", help="where to write it (default: stdout)")
    parser.add_argument("--profile", choices=[name for name in PROFILE_OVERLAYS if name],
                        help="the schemas as this profile reads them (lmstudio: LM Studio's dialect)")
    parser.add_argument("--level", choices=[str(level) for level in LEVELS], default=str(Level.INFO),
                        help="keep requirements down to this level (MUST: only what breaks clients; default INFO)")
    parser.set_defaults(handler=run_openapi)
    return parser


def run_openapi(args: argparse.Namespace) -> int:
    assembled = document(args.profile, Level(args.level))
    if args.output is None:
        print(json.dumps(assembled, indent=2, ensure_ascii=False))
        return 0
    try:
        write_json_atomically(args.output, assembled)
    except OSError as error:
        print(f"lmconform openapi: {args.output}: cannot write: {error.strerror or error}", file=sys.stderr)
        return USAGE_ERROR
    print(f"lmconform openapi: wrote {args.output}")
    return 0
