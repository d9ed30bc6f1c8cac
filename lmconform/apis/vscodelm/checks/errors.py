"""Errors: a bad message gets the JSON-RPC error that names its fault, and never ends the process; and the two
small requests, model information and token count, answered in their shape."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.vscodelm import CHAT_INFORMATION, TOKEN_COUNT
from lmconform.apis.vscodelm.checks.common import BridgeObserved, asked, responses
from lmconform.apis.vscodelm.checks.scope import vscodelm_error_code, vscodelm_invalid, vscodelm_method
from lmconform.checks.refs import JSONRPC_ERRORS, SYMPOSIUM_VSCODELM, VSCODE_LM_PROVIDER
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, Note

METHOD_NOT_FOUND, PARSE_ERROR, INVALID_PARAMS = -32601, -32700, -32602


def _lost(observed: BridgeObserved) -> str:
    process = getattr(observed.exchange, "process", None)
    return f" (the bridge: {process.exit_text()})" if process is not None else ""


@check("vscodelm.errors.method_not_found", level=Level.MUST, applies=vscodelm_error_code(METHOD_NOT_FOUND),
       ref=JSONRPC_ERRORS, title="a request for a method the bridge does not have is answered with error -32601",
       proven_by=("unknown-method-invalid-request",))
def method_not_found(observed: BridgeObserved) -> Iterator[Failure]:
    # VS Code adds methods over time; a client tells "not supported" from "failed" by this code.
    item = asked(observed)[0]
    if item.error_code != METHOD_NOT_FOUND:
        yield Failure(f"error {METHOD_NOT_FOUND} for {item.method}", item.exchange.status_text,
                      str(item.response or ""))


@check("vscodelm.errors.parse_error", level=Level.MUST, applies=vscodelm_error_code(PARSE_ERROR), ref=JSONRPC_ERRORS,
       title='a line that is not JSON is answered with error -32700 and "id": null', proven_by=("parse-error-ignored",))
def parse_error(observed: BridgeObserved) -> Iterator[Failure]:
    item = asked(observed)[0]
    owned = {id(message) for other in asked(observed) for message in other.exchange.messages}
    answers = [message for message in responses(observed) if message.at >= item.sent_at and id(message) not in owned]
    errors = [message for message in answers if isinstance(message.value.get("error"), dict)
              and message.value["error"].get("code") == PARSE_ERROR]
    if not errors:
        yield Failure(f"error {PARSE_ERROR} for the line {item.params!r:.80}",
                      "no answer" if not answers else "another answer", str(answers[0]) if answers else "")
    elif errors[0].value.get("id", "absent") is not None:
        yield Failure('"id": null', f"id {json.dumps(errors[0].value.get('id', 'absent'))}", str(errors[0]))


@check("vscodelm.errors.invalid_params", level=Level.MUST, applies=vscodelm_error_code(INVALID_PARAMS),
       ref=SYMPOSIUM_VSCODELM, judges_lost_process=True,
       title="params of the wrong shape are answered with an error, and the bridge lives",
       proven_by=("dies-on-bad-params",))
def invalid_params(observed: BridgeObserved) -> Iterator[Failure | Note]:
    # A bridge that dies on one malformed request takes every chat of the editor with it.
    item = asked(observed)[0]
    if item.response is None:
        yield Failure(f"an error for {item.method} with params of the wrong shape",
                      f"no answer{_lost(observed)}", observed.exchange.error or "")
    elif item.error is None:
        yield Failure("an error", item.exchange.status_text, str(item.response))
    elif item.error_code != INVALID_PARAMS:
        yield Note(f"answered with error {item.error_code}; JSON-RPC names {INVALID_PARAMS} for invalid params")


@check("vscodelm.errors.alive_after_error", level=Level.MUST, applies=vscodelm_invalid, ref=SYMPOSIUM_VSCODELM,
       judges_lost_process=True, title="after a bad message the bridge answers the next request",
       proven_by=("dies-on-bad-params",))
def alive_after_error(observed: BridgeObserved) -> Iterator[Failure]:
    following = next((item for item in asked(observed)[1:] if item.is_request), None)
    if following is None:
        return
    if not following.exchange.succeeded:
        yield Failure(f"a result for the next request ({following.method})",
                      following.exchange.status_text + _lost(observed), str(following.response or ""))


def _result(observed: BridgeObserved) -> object:
    observed.require_success()
    response = asked(observed)[0].response
    assert response is not None, "a request that succeeded was answered"
    return response.value["result"]


_MODEL_TEXT = ("id", "name", "family", "version")
_MODEL_LIMITS = ("maxInputTokens", "maxOutputTokens")


@check("vscodelm.info.model_shape", level=Level.MUST, applies=vscodelm_method(CHAT_INFORMATION),
       ref=VSCODE_LM_PROVIDER, title="the model information lists models with id, name, family, version, token "
                                     "limits and capabilities", proven_by=("model-info-without-capabilities",))
def model_shape(observed: BridgeObserved) -> Iterator[Failure]:
    # VS Code's LanguageModelChatInformation: a model without these is not offered in the model picker.
    result = _result(observed)
    models = result.get("models") if isinstance(result, dict) else None
    if not isinstance(models, list) or not models:
        yield Failure("a non-empty `models` list", json.dumps(result)[:200])
        return
    for index, model in enumerate(models):
        where = f"models[{index}]"
        if not isinstance(model, dict):
            yield Failure(f"{where} an object", json.dumps(model)[:200])
            continue
        for key in _MODEL_TEXT:
            if not isinstance(model.get(key), str) or not model[key]:
                yield Failure(f"{where}.{key} a non-empty string", json.dumps(model.get(key)), json.dumps(model)[:300])
        for key in _MODEL_LIMITS:
            value = model.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                yield Failure(f"{where}.{key} a positive integer", json.dumps(value), json.dumps(model)[:300])
        capabilities = model.get("capabilities")
        if not isinstance(capabilities, dict) or not isinstance(capabilities.get("toolCalling", False), bool):
            yield Failure(f"{where}.capabilities an object ({{\"toolCalling\": bool}})", json.dumps(capabilities),
                          json.dumps(model)[:300])


@check("vscodelm.tokens.count_positive", level=Level.MUST, applies=vscodelm_method(TOKEN_COUNT),
       ref=VSCODE_LM_PROVIDER, title="a token count is an integer of at least 1", proven_by=("token-count-zero",))
def count_positive(observed: BridgeObserved) -> Iterator[Failure]:
    # VS Code budgets its prompt with these counts: 0 for a text that is there makes it overfill the context.
    result = _result(observed)
    count = result.get("count") if isinstance(result, dict) else None
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        yield Failure("`count`, an integer of at least 1", json.dumps(result)[:200])
