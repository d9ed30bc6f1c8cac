"""What kind of server answers at a base URL, and which versions it can be, from a few harmless requests.

LM Studio publishes no version over HTTP, so its version is bracketed by the endpoints that answer: each
appeared in a known release. Other servers say their version somewhere (an OpenAPI document, a build string in
`system_fingerprint`, a version route). Cheap GET probes come first; a one-token chat completion is sent only
when they leave the server unknown, since on a local server it may load a model.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from lmconform.command_line import SECONDS
from lmconform.exit_status import UNREACHABLE, USAGE_ERROR
from lmconform.reference.wire import DEFAULT_MODEL as REFERENCE_MODEL
from lmconform.target import Target, normalize_base_url
from lmconform.wire.http import LMSTUDIO_UNKNOWN_ROUTE, HttpExchange, route_missing, send

# A path no server serves: how a server answers it is a tell (LM Studio: 200 with an error string).
UNKNOWN_ROUTE = "/v1/lmconform-fingerprint-probe"
# The release of LM Studio in which each endpoint first answered (LM Studio's API changelog).
LMSTUDIO_MILESTONES = (
    ("0.3.6", "GET", "/api/v0/models"),
    ("0.3.29", "POST", "/v1/responses"),
    ("0.4.0", "GET", "/api/v1/models"),
)
# llama.cpp's build string: `b11669-0f1a2b3c`, or the number alone.
LLAMA_CPP_BUILD = re.compile(r"(b\d+)(?:-|$)")


class Probes:
    """The answers of one target, each request sent at most once and only when a rule asks for it."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self._answers: dict[tuple[str, str], HttpExchange] = {}

    def answer(self, method: str, path: str, body: Any = None) -> HttpExchange:
        if (method, path) not in self._answers:
            self._answers[method, path] = send(self.target, method, path, body)
        return self._answers[method, path]

    def get(self, path: str) -> HttpExchange:
        return self.answer("GET", path)

    @property
    def reachable(self) -> bool:
        return self.get("/v1/models").error_kind != "unreachable"

    @cached_property
    def model_ids(self) -> list[str]:
        data = _field(self.get("/v1/models"), "data")
        return [item["id"] for item in data or () if isinstance(item, dict) and isinstance(item.get("id"), str)]


def _field(exchange: HttpExchange, name: str) -> Any:
    return exchange.json.get(name) if isinstance(exchange.json, dict) else None


def _answered(exchange: HttpExchange) -> bool:
    return exchange.status is not None and not route_missing(exchange)


def _result(kind: str, evidence: list[str], version_bracket: str | None = None, engine: str | None = None) -> dict:
    return {"kind": kind, "version_bracket": version_bracket, "engine": engine, "evidence": evidence}


def fingerprint(target: Target) -> dict:
    """`{"kind", "version_bracket", "engine", "evidence"}` for `target`; never raises for what the target does."""
    return identify(Probes(target))


def identify(probes: Probes) -> dict:
    models = probes.get("/v1/models")
    if not probes.reachable:
        return _result("unknown", [f"nothing answers: {models.error}"])
    if models.error_kind == "timeout":
        # Each further probe would wait as long: a server silent to the cheapest one made the command take a minute.
        return _result("unknown", [f"GET /v1/models: {models.error}"])
    if REFERENCE_MODEL in probes.model_ids:
        return _result("reference", [f"GET /v1/models lists {REFERENCE_MODEL}"])
    for rule in (_lmstudio, _litellm, _ollama, _vllm, _llama_cpp, _llama_cpp_by_chat):
        result = rule(probes)
        if result is not None:
            return result
    headers = [f"{name}: {models.headers[name]}" for name in ("server", "x-powered-by") if name in models.headers]
    # An answer that is not HTTP (a protocol error) has no status: what went wrong is the evidence.
    answered = models.status if models.status is not None else models.error
    return _result("unknown", [f"GET /v1/models: {answered}", *headers])


def _exact(version: str | None) -> str | None:
    return f"=={version}" if version else None


def _lmstudio(probes: Probes) -> dict | None:
    unknown = probes.get(UNKNOWN_ROUTE)
    error = _field(unknown, "error")
    express = probes.get("/v1/models").headers.get("x-powered-by") == "Express"
    tell = unknown.status == 200 and isinstance(error, str) and error.startswith(LMSTUDIO_UNKNOWN_ROUTE)
    if not (tell or express and (_answered(probes.get("/api/v0/models")) or _answered(probes.get("/api/v1/models")))):
        return None
    evidence = []
    if tell:
        evidence.append(f"GET {UNKNOWN_ROUTE}: 200 '{LMSTUDIO_UNKNOWN_ROUTE}' (LM Studio's unknown-route answer)")
    if express:
        evidence.append("X-Powered-By: Express (LM Studio's HTTP server)")
    # The Responses endpoint is probed with an empty body: a validation error proves it exists without generating.
    lower = upper = None
    for version, method, path in LMSTUDIO_MILESTONES:
        exchange = probes.answer(method, path, {} if method == "POST" else None)
        if _answered(exchange):
            lower, upper = version, None
            evidence.append(f"{method} {path}: {exchange.status} (added in LM Studio {version})")
        elif route_missing(exchange):
            upper = upper or version
            evidence.append(f"{method} {path}: unknown route (added in LM Studio {version})")
        else:
            evidence.append(f"{method} {path}: no answer ({exchange.error_kind})")
    bracket = ",".join(part for part in (lower and f">={lower}", upper and f"<{upper}") if part) or None
    engine = _lmstudio_runtime(probes.get("/api/v0/models"))
    if engine:
        evidence.append(f"GET /api/v0/models: runtime {engine}")
    return _result("lmstudio", evidence, bracket, engine)


def _lmstudio_runtime(exchange: HttpExchange) -> str | None:
    """`runtime {name, version}` of LM Studio's engine, at the top of the answer or on a model."""
    body = exchange.json if isinstance(exchange.json, dict) else {}
    models = body.get("data")
    for holder in (body, *(models if isinstance(models, list) else ())):
        runtime = holder.get("runtime") if isinstance(holder, dict) else None
        if isinstance(runtime, dict) and isinstance(runtime.get("name"), str):
            return " ".join(str(runtime[key]) for key in ("name", "version") if runtime.get(key))
    return None


def _openapi_info(probes: Probes) -> tuple[str, str | None]:
    """(title, version) of the server's OpenAPI document; FastAPI servers publish one at /openapi.json."""
    info = _field(probes.get("/openapi.json"), "info")
    if not isinstance(info, dict) or not isinstance(info.get("title"), str):
        return "", None
    version = info.get("version")
    return info["title"], version if isinstance(version, str) else None


def _litellm(probes: Probes) -> dict | None:
    title, version = _openapi_info(probes)
    if "litellm" in title.lower():
        return _result("litellm", [f"GET /openapi.json: {title} {version}"], _exact(version))
    liveliness = probes.get("/health/liveliness")
    if liveliness.status == 200 and "alive" in liveliness.body_excerpt(100).lower():
        return _result("litellm", [f"GET /health/liveliness: {liveliness.body_excerpt(40)}"])
    return None


def _with_version_route(probes: Probes, kind: str, evidence: list[str], path: str) -> dict:
    """The result for `kind`, with the version its server reports at `path` as `{"version": ...}`, if any."""
    version = _field(probes.get(path), "version")
    if not isinstance(version, str):
        return _result(kind, evidence)
    return _result(kind, [*evidence, f"GET {path}: {version}"], _exact(version))


def _ollama(probes: Probes) -> dict | None:
    root = probes.get("/")
    if root.status != 200 or "ollama is running" not in root.body_excerpt(100).lower():
        return None
    return _with_version_route(probes, "ollama", ["GET /: 'Ollama is running'"], "/api/version")


def _vllm(probes: Probes) -> dict | None:
    data = _field(probes.get("/v1/models"), "data") or []
    if not any(isinstance(item, dict) and item.get("owned_by") == "vllm" for item in data):
        return None
    return _with_version_route(probes, "vllm", ["GET /v1/models: owned_by vllm"], "/version")


def _llama_cpp(probes: Probes) -> dict | None:
    """llama.cpp's own server (`/props`), or llama-cpp-python (its OpenAPI title)."""
    title, version = _openapi_info(probes)
    if "llama.cpp" in title:
        engine = f"llama-cpp-python {version}" if version else "llama-cpp-python"
        evidence = [f"GET /openapi.json: {title} {version}"]
        return _llama_cpp_by_chat(probes, engine, evidence) or _result("llama.cpp", evidence, None, engine)
    props = probes.get("/props")
    if not isinstance(props.json, dict) or not {"default_generation_settings", "build_info"} & props.json.keys():
        return None
    evidence = ["GET /props: llama-server's properties"]
    health = probes.get("/health")
    if health.status == 200:
        evidence.append(f"GET /health: {health.body_excerpt(40)}")
    build = props.json.get("build_info")
    if isinstance(build, str) and LLAMA_CPP_BUILD.match(build):
        evidence.append(f"GET /props: build_info {build}")
        return _llama_cpp_build(build, None, evidence)
    return _llama_cpp_by_chat(probes, evidence=evidence) or _result("llama.cpp", evidence)


def _llama_cpp_build(build: str, engine: str | None, evidence: list[str]) -> dict:
    matched = LLAMA_CPP_BUILD.match(build)
    number = matched[1] if matched else build
    return _result("llama.cpp", evidence, f"=={number}", engine or f"llama.cpp {number}")


def _llama_cpp_by_chat(probes: Probes, engine: str | None = None, evidence: Sequence[str] = ()) -> dict | None:
    """llama.cpp puts its build first in `system_fingerprint` (`b11669-…`); one token is enough to see it."""
    body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    model = probes.target.model or next(iter(probes.model_ids), None)
    if model:
        body["model"] = model
    exchange = probes.answer("POST", "/v1/chat/completions", body)
    system_fingerprint = _field(exchange, "system_fingerprint")
    if isinstance(system_fingerprint, str) and LLAMA_CPP_BUILD.match(system_fingerprint):
        return _llama_cpp_build(system_fingerprint, engine,
                                [*evidence, f"chat completion: system_fingerprint {system_fingerprint[:40]}"])
    return None


def _run(args: argparse.Namespace) -> int:
    try:
        base_url = normalize_base_url(args.url)
    except ValueError as error:
        print(f"lmconform fingerprint: {error}", file=sys.stderr)
        return USAGE_ERROR
    api_key = args.api_key or os.environ.get("LMCONFORM_API_KEY") or None
    probes = Probes(Target(base_url=base_url, api_key=api_key, model=args.model, label="fingerprint",
                           read_timeout=args.read_timeout))
    if not probes.reachable:
        print(f"lmconform fingerprint: nothing answers at {base_url}", file=sys.stderr)
        return UNREACHABLE
    print(json.dumps(identify(probes), indent=2, ensure_ascii=False))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """`fingerprint URL` under the `lmconform` command."""
    parser = subparsers.add_parser("fingerprint", help="what kind of server answers at URL, which versions it can be",
                                   description="Prints kind, version bracket, engine and evidence as JSON; exit "
                                               "status 3 when nothing answers.")
    parser.add_argument("url", metavar="URL", help="base URL, with or without /v1")
    parser.add_argument("--api-key", help="API key sent as a Bearer token (default: $LMCONFORM_API_KEY)")
    parser.add_argument("--model", help="model for the one-token chat probe (default: the first listed)")
    parser.add_argument("--read-timeout", type=SECONDS, default=10.0, metavar="SECONDS",
                        help="seconds to wait for each answer (default 10)")
    parser.set_defaults(handler=_run)
