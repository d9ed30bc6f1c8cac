"""`/v1/responses` tools: flattened function tools accepted and called, the chat form refused or honoured, and the
function_call items an agent answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.apis.responses.checks.scope import responses_answer, responses_flattened_tools, responses_nested_tools
from lmconform.apis.responses.checks.views import final_response
from lmconform.checks.observed import Observed
from lmconform.checks.refs import LMSTUDIO_NESTED_TOOLS, LMSTUDIO_RESPONSES, OPENAI_RESPONSES_CREATE
from lmconform.checks.registry import check
from lmconform.normalize.errors import error_object
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, Requirement, shown


def function_calls(response: Any) -> list[dict]:
    output = response.get("output") if isinstance(response, dict) else None
    return [item for item in output or [] if isinstance(item, dict) and item.get("type") == "function_call"]


@check("responses.tools.flattened_accepted", level=Level.MUST, applies=responses_flattened_tools,
       ref=LMSTUDIO_RESPONSES, title="flattened function tools are understood: the tool the prompt asks for is called",
       proven_by=("no-response-completed",))
def flattened_accepted(observed: Observed) -> Iterator[Failure]:
    # A refusal of the request is http.status.success_for_valid_request's finding; this one is about tools that
    # were accepted and then not seen by the model.
    observed.require_success()
    if not function_calls(final_response(observed)):
        yield Failure("a function_call output item", "none", observed.exchange.body_excerpt(400))


@check("responses.function_call.item_complete", level=Level.MUST, applies=responses_answer, ref=OPENAI_RESPONSES_CREATE,
       title="a function_call item carries `call_id`, `name` and string `arguments`", proven_by=("call-id-missing",))
def function_call_item_complete(observed: Observed) -> Iterator[Failure]:
    # The next turn answers a call by its call_id; without it the result cannot be sent back.
    observed.require_success()
    calls = function_calls(final_response(observed))
    if not calls:
        raise NotApplicable("the answer has no function_call item")
    for item in calls:
        missing = [key for key in ("call_id", "name") if not isinstance(item.get(key), str) or not item[key]]
        if not isinstance(item.get("arguments"), str):
            missing.append("arguments (string)")
        if missing:
            yield Failure("call_id, name and arguments", f"missing {', '.join(missing)}", json.dumps(item)[:400])


@check("responses.tools.nested_rejected_or_honoured", level=Level.MUST, applies=responses_nested_tools,
       ref=LMSTUDIO_RESPONSES, title="chat-form (nested) tools are refused with a 4xx, or honoured fully",
       proven_by=("nested-tools-accepted",))
def nested_rejected_or_honoured(observed: Observed) -> Iterator[Failure | Note]:
    # The refusal is this check's property; what its body says (the param it names) is the error checks' and,
    # for LM Studio's exact words, responses.tools.nested_error_is_lmstudio_zod's.
    exchange = observed.exchange
    status = exchange.status or 0
    if 400 <= status < 500:
        yield Note(f"refused: HTTP {status}, param {shown(error_object(exchange).get('param'))}")
    elif not observed.succeeded:
        yield Failure("a 4xx refusal or a function call", f"HTTP {status}", exchange.body_excerpt())
    elif function_calls(final_response(observed)):
        yield Note("honoured: the nested tools were called")
    else:
        yield Failure("a 4xx refusal, or a call to the tool", "HTTP 200 without a function call: tools silently ignored",
                      exchange.body_excerpt(400))


@check("responses.tools.nested_error_is_lmstudio_zod", level=Level.MUST, applies=responses_nested_tools,
       requires=[Requirement.LMSTUDIO_PROFILE], ref=LMSTUDIO_NESTED_TOOLS,
       title='LM Studio refuses nested tools with "Required" at param "tools.0.name"',
       proven_by=("nested-tools-accepted",))
def nested_error_is_lmstudio_zod(observed: Observed) -> Iterator[Failure]:
    exchange = observed.exchange
    error = error_object(exchange)
    seen = (exchange.status, error.get("message"), error.get("param"), error.get("code"))
    wanted = (400, "Required", "tools.0.name", "invalid_type")
    if seen != wanted:
        yield Failure("HTTP 400, message 'Required', param 'tools.0.name', code 'invalid_type'",
                      "HTTP {}, message {}, param {}, code {}".format(seen[0], *map(shown, seen[1:])),
                      exchange.body_excerpt())
