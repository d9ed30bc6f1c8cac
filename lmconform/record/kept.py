"""What the recorder keeps of a request, and what it reads of an answer: who the client is, the headers worth
keeping as evidence (credentials redacted), every credential to redact wherever it appears, and the description of
a new case."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lmconform.api_table import APIS
from lmconform.wire.http import HOP_HEADERS
from lmconform.wire.redact import FILTERED, SECRET_HEADERS, redact_headers, redact_text
from lmconform.wire.sse import parse_sse

# The endpoints the suite has cases for: (method, path) -> (case folder, the endpoint's part of the file name).
ENDPOINTS = {(api.method, api.path): (api.name, api.slug) for api in APIS.values()}
# A recorder script names what it is doing in this header; it becomes the case's description and is not recorded.
LABEL_HEADER = "x-lmconform-label"
# Headers whose values differ between machines (OS, CPU, runtime build) or between tries of one request.
VOLATILE_HEADERS = frozenset({"x-stainless-os", "x-stainless-arch", "x-stainless-runtime-version",
                              "x-stainless-retry-count", "idempotency-key", "traceparent", "tracestate",
                              "x-request-id", "date"})
# Stands for the id of a response the recorder never saw; no server issues it, so a replay is refused as it was.
UNKNOWN_PREVIOUS_MARKER = "resp_lmconform_recorded_unknown_previous"
NOT_JSON = object()  # a body that does not parse, kept as the raw_body it was
_AGENTS_USER_AGENT = re.compile(r"Agents/Python (\S+)")
_STAINLESS_LANGUAGES = {"python": "python", "js": "node"}
# The SDK families Stainless builds, by the product their user agent names (`Anthropic/Python 2.12.0`).
_STAINLESS_FAMILIES = {"anthropic": "anthropic"}
_SDK_PRODUCTS = frozenset({"openai", "anthropic"})


def client_identity(headers: Mapping[str, str]) -> tuple[str, str]:
    """The client's name and version as its headers tell them: `("openai-python", "3.54.0")`,
    `("anthropic-python", "2.12.0")`. The agents SDK drives the openai SDK, so its version says which openai SDK
    too: `("openai-agents", "0.24.0 (openai-python 3.54.0)")`. An application built on an SDK names itself in its
    user agent (`claude-cli/2.1.332`), and is named so, not after the SDK inside it."""
    agent = headers.get("user-agent", "")
    language, package = headers.get("x-stainless-lang"), headers.get("x-stainless-package-version")
    family = _STAINLESS_FAMILIES.get(agent.split("/", 1)[0].lower(), "openai")
    sdk = (f"{family}-{_STAINLESS_LANGUAGES.get(language, language)}", package) if language and package else None
    if found := _AGENTS_USER_AGENT.match(agent):
        return "openai-agents", f"{found[1]} ({' '.join(sdk)})" if sdk else found[1]
    product = agent.split(" ", 1)[0]
    name, _, version = product.partition("/")
    if sdk and (name.lower() in _SDK_PRODUCTS or not version):
        return sdk
    return name or "unknown-client", version or "unknown version"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "client"


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers worth keeping as evidence of what the client sent, credentials redacted, sorted by name."""
    kept = {}
    for name, value in headers.items():
        name = name.lower()
        if name in HOP_HEADERS | VOLATILE_HEADERS | {LABEL_HEADER}:
            continue
        # Only Authorization has a scheme worth keeping; redact_headers would keep a cookie's first pair as one.
        kept[name] = FILTERED if name in SECRET_HEADERS and not name.endswith("authorization") else value
    return dict(sorted(redact_headers(kept).items()))


def credentials(headers: Mapping[str, str]) -> tuple[str, ...]:
    """Every credential value in `headers`, with and without its scheme, to be redacted wherever it appears."""
    found: list[str] = []
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS and value.strip():
            found += [value.strip(), value.split(" ", 1)[-1].strip()]
            if name.lower() == "cookie":
                found += [pair.partition("=")[2].strip() for pair in value.split(";")]
    # Longest first, so that a key is not half-replaced by a shorter secret inside it.
    return tuple(sorted({secret for secret in found if secret}, key=len, reverse=True))


def redacted(value: Any, secrets_: tuple[str, ...]) -> Any:
    """`value` with every secret replaced in every string, keys included."""
    if isinstance(value, str):
        return redact_text(value, secrets_)
    if isinstance(value, dict):
        return {redacted(key, secrets_): redacted(item, secrets_) for key, item in value.items()}
    if isinstance(value, list):
        return [redacted(item, secrets_) for item in value]
    return value


def response_id_of(body: bytes, content_type: str) -> str | None:
    """The id of the Responses object in an answer: its JSON body, or the response of its first stream event."""
    if content_type.startswith("text/event-stream"):
        for event in parse_sse([body]).events:
            response = json_object(event.data.encode()).get("response")
            if isinstance(response, dict) and isinstance(response.get("id"), str):
                return response["id"]
        return None
    found = json_object(body).get("id")
    return found if isinstance(found, str) else None


def parsed_json(data: bytes) -> Any:
    """The JSON in `data`, or NOT_JSON."""
    try:
        return json.loads(data)
    except ValueError:
        return NOT_JSON


def json_object(data: bytes) -> dict:
    """The JSON object in `data`; empty when it holds anything else."""
    value = parsed_json(data)
    return value if isinstance(value, dict) else {}


def error_message(body: bytes) -> str:
    """What a refusal said: OpenAI's `{"error": {"message"}}`, LM Studio's `{"error": "..."}`, or the raw text."""
    error = json_object(body).get("error")
    message = error.get("message") if isinstance(error, dict) else error
    text = message if isinstance(message, str) else body.decode("utf-8", errors="replace")
    return " ".join(text.split())[:160]


@dataclass
class Answer:
    """What the answering app sent back, as far as recording needs it."""

    status: int | None = None
    content_type: str = ""
    body: bytearray = field(default_factory=bytearray)


@dataclass(frozen=True)
class Captured:
    method: str
    path: str  # with the query string, if any
    headers: dict[str, str]  # lower-case names, as received
    body: bytes
    label: str | None


def description(name: str, captured: Captured, body: Any, index: int, taken: set[str]) -> str:
    """The label the recorder script gave, or a summary of the request; the index makes it unique when taken."""
    if captured.label:
        what = captured.label
    elif not isinstance(body, dict):
        what = f"{captured.method} {captured.path}"
    else:
        tools = body.get("tools")
        count = len(tools) if isinstance(tools, list) else 0
        endpoint = ENDPOINTS.get((captured.method, captured.path.split("?", 1)[0]))
        kind = APIS[endpoint[0]].noun if endpoint else "response"
        what = ("streamed " if body.get("stream") is True else "") + kind + (f" with {count} tools" if count else "")
    description = f"{name}: {what}"
    if description[:80] not in taken:
        return description[:80]
    suffix = f" #{index}"
    return description[:80 - len(suffix)] + suffix


