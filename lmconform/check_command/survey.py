"""What `lmconform check URL` finds out before it runs anything: that something answers there, that it is an
OpenAI-compatible API which takes the key it was given, which models it serves and which one to test, and what kind
of server it is. A bad address, key or model ends here with one line saying what to do (`Refused`), never a
traceback or a run of a thousand ERROR verdicts."""

from __future__ import annotations

from dataclasses import dataclass

from lmconform.api_table import APIS, HTTP
from lmconform.exit_status import UNREACHABLE, USAGE_ERROR
from lmconform.fingerprint import Probes, identify
from lmconform.report.target_prose import KIND_NAMES, bracket_words
from lmconform.run.play import play
from lmconform.run.run import feature_probe
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.wire.http import HttpExchange, over_http, route_missing

REFUSED_KEY = (401, 403)


class Refused(Exception):
    """The target cannot be tested as given: `message` says what to do, `status` is the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Model:
    """A model the server lists, with what its native model list says of it (LM Studio's), when it says."""

    id: str
    tools: bool = False  # the server says the model was trained for tool use
    loaded: bool = False
    generates: bool = True  # not an embedding model


@dataclass(frozen=True)
class Survey:
    models: tuple[Model, ...]
    model: str | None  # the model the run requests
    fingerprint: dict

    @property
    def profile(self) -> str | None:
        """The server family's documented behaviour to hold the run to (--profile): LM Studio at the oldest version
        it can be (a feature that version lacks is UNSUPPORTED, not FAILED), or the reference server's own."""
        kind, bracket = self.fingerprint.get("kind"), self.fingerprint.get("version_bracket") or ""
        if kind == "reference":
            return "reference"
        if kind != "lmstudio":
            return None
        oldest = next((part[2:] for part in bracket.split(",") if part.startswith(">=")), None)
        return f"lmstudio@{oldest}" if oldest else "lmstudio"

    @property
    def sentence(self) -> str:
        """`LM Studio 0.4.0 or later, engine llama.cpp 1.52, 3 models; the model qwen3-4b can call tools`."""
        kind = self.fingerprint.get("kind") or "unknown"
        what = KIND_NAMES.get(kind, kind)
        if self.fingerprint.get("version_bracket"):
            what += f" {bracket_words(self.fingerprint['version_bracket'])}"
        if self.fingerprint.get("engine"):
            what += f", engine {self.fingerprint['engine']}"
        count = len(self.models)
        what += f", {count} model{'' if count == 1 else 's'}"
        if self.model is None:
            return what + "; no model named or listed: the requests name none"
        chosen = next((model for model in self.models if model.id == self.model), None)
        can = "; the model {} can call tools" if chosen and chosen.tools else "; testing the model {}"
        return what + can.format(self.model)


def survey(target: Target) -> Survey:
    """Refused when nothing answers, the answer is a web page, the key is refused or the model is not listed."""
    probes = Probes(target)
    listed = probes.get("/v1/models")
    where = target.base_url
    if listed.error_kind == "unreachable":
        raise Refused(f"nothing answers at {where}: start the server (LM Studio: Developer tab, Start Server) or "
                      "give the address it listens on", UNREACHABLE)
    if listed.error_kind == "timeout":
        raise Refused(f"{where} did not answer GET /v1/models ({listed.error}): check the address, or raise "
                      "--read-timeout", UNREACHABLE)
    if listed.error_kind is not None:  # no waiting longer mends an answer that is not HTTP
        raise Refused(f"{where} did not answer GET /v1/models with HTTP ({listed.error}): check the address, "
                      "and that it is an HTTP server's", UNREACHABLE)
    if listed.status in REFUSED_KEY:
        said = "refused the API key" if target.api_key else "wants an API key"
        raise Refused(f"{where} {said} (HTTP {listed.status} to GET /v1/models): pass the server's key with "
                      "--api-key KEY or $LMCONFORM_API_KEY", USAGE_ERROR)
    if _is_html(listed):
        raise Refused(f"{where} answers with a web page, not an OpenAI-compatible API: give the API's base URL "
                      "(LM Studio: http://localhost:1234)", UNREACHABLE)
    if not (listed.succeeded and isinstance(listed.json, dict) and isinstance(listed.json.get("data"), list)):
        answered = f"HTTP {listed.status} {listed.content_type or 'untyped'}: {listed.body_excerpt(80)}"
        if not target.model:
            raise Refused(f"{where} answers GET /v1/models with no list of models ({answered}): this is not an "
                          "OpenAI-compatible API's address; give its base URL (LM Studio: http://localhost:1234), or "
                          "name the model with --model if the server lists none", UNREACHABLE)
    models = _models(probes)
    ids = [model.id for model in models]
    if target.model and ids and target.model not in ids:
        shown = ", ".join(ids[:8]) + (", …" if len(ids) > 8 else "")
        raise Refused(f"{where} lists no model {target.model!r}: pass one it lists with --model ({shown})",
                      USAGE_ERROR)
    return Survey(tuple(models), target.model or pick_model(models), identify(probes))


def _is_html(exchange: HttpExchange) -> bool:
    return "html" in exchange.content_type or exchange.body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html"))


def pick_model(models: list[Model]) -> str | None:
    """A model that generates text, loaded and able to call tools where the server says so, else the first listed."""
    ranked = sorted((model for model in models if model.generates), key=lambda model: (not model.tools,
                                                                                        not model.loaded))
    return ranked[0].id if ranked else (models[0].id if models else None)


def _models(probes: Probes) -> list[Model]:
    """The OpenAI list's models, with what LM Studio's own lists say of each: `/api/v1/models` (0.4: `key`,
    `capabilities.trained_for_tool_use`, `loaded_instances`) or `/api/v0/models` (`capabilities: ["tool_use"]`,
    `state`); other servers' lists say nothing of tools."""
    native: dict[str, Model] = {}
    for path, items_key in (("/api/v1/models", "models"), ("/api/v0/models", "data")):
        body = probes.get(path).json
        items = body.get(items_key) if isinstance(body, dict) else None
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                model = _native_model(item)
                if model is not None:
                    native.setdefault(model.id, model)
    return [native.get(model_id, Model(model_id)) for model_id in probes.model_ids]


def _native_model(item: dict) -> Model | None:
    model_id = item.get("key") if isinstance(item.get("key"), str) else item.get("id")
    if not isinstance(model_id, str):
        return None
    capabilities = item.get("capabilities")
    tools = (capabilities.get("trained_for_tool_use") is True if isinstance(capabilities, dict)
             else isinstance(capabilities, list) and "tool_use" in capabilities)
    loaded = item.get("state") == "loaded" or bool(item.get("loaded_instances"))
    return Model(model_id, tools, loaded, item.get("type") not in ("embedding", "embeddings"))


# The output cap of a probe: enough for any model to answer, short enough that a CPU model answers in seconds.
PROBE_MAX_TOKENS = 16


def missing_apis(target: Target) -> dict[str, str]:
    """The optional APIs the target does not offer, each with how it said so (`HTTP 404 to POST /v1/messages`):
    decided as the run decides it, from the API's first valid case, whose route answers as a missing one."""
    missing = {}
    for api in APIS.values():
        if not api.optional or api.transport != HTTP:
            continue
        probe = feature_probe(api.name, api.name)  # an optional API's cases name it as their feature
        if probe is None:
            continue
        exchange = over_http(play(probe, target, settings=RunSettings(max_tokens=PROBE_MAX_TOKENS)).exchange)
        if route_missing(exchange):
            missing[api.name] = f"HTTP {exchange.status} to {probe.method} {probe.path}"
    return missing


def offer_sentence(missing: dict[str, str]) -> str:
    """`it does not offer Anthropic Messages (HTTP 404 to POST /v1/messages): those cases are left out`."""
    if not missing:
        return "it offers every API lmconform tests"
    named = "; ".join(f"{APIS[api].title} ({how})" for api, how in missing.items())
    return f"it does not offer {named}: those cases are left out"
