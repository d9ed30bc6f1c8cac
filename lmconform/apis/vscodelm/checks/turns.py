"""Turns: each chat request answered with its parts, exactly one complete, then its result, every notification
naming its request by the id as sent; only the protocol's parts; a tool call last, its id never reused, and a tool
result answered by the agent's continuation."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.vscodelm import RESPONSE_PART
from lmconform.apis.vscodelm.checks.common import (
    BridgeObserved,
    asked,
    cancel_time,
    chat_requests,
    notifications,
    position,
    unsent,
)
from lmconform.apis.vscodelm.checks.scope import (
    vscodelm_chat,
    vscodelm_tool_result,
    vscodelm_valid,
    vscodelm_with_tools,
)
from lmconform.apis.vscodelm.normalize import Asked, part_of, well_formed_part
from lmconform.checks.refs import SYMPOSIUM_VSCODELM, SYMPOSIUM_VSCODELM_SESSION, VSCODE_LM_PROVIDER
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable


def _said(item: Asked) -> str:
    return f"request {json.dumps(item.request_id)} ({item.name})"


@check("vscodelm.turn.result_for_valid_request", level=Level.MUST, applies=vscodelm_valid, ref=SYMPOSIUM_VSCODELM,
       title="a valid request is answered with a result, not an error", proven_by=("tool-result-refused",))
def result_for_valid_request(observed: BridgeObserved) -> Iterator[Failure]:
    # An error ends the chat in VS Code with the error's text; a cancelled request is the cancel checks' to judge.
    for item in asked(observed):
        if not item.is_request or cancel_time(observed, item.name) is not None:
            continue
        if item.response is None:
            yield Failure(f"a result for {_said(item)}", "no answer", "")
        elif item.error is not None or "result" not in item.response.value:
            yield Failure(f"a result for {_said(item)}", item.exchange.status_text, str(item.response))


@check("vscodelm.turn.one_complete", level=Level.MUST, applies=vscodelm_chat, ref=SYMPOSIUM_VSCODELM_SESSION,
       title="a chat request answered with a result sends exactly one lm/responseComplete; one answered with an "
             "error, none", proven_by=("no-complete",))
def one_complete(observed: BridgeObserved) -> Iterator[Failure]:
    # The client closes the response stream on the complete: without one the chat never ends, and a second
    # closes it twice. An agent failure is an error instead, with no complete.
    for item in chat_requests(observed):
        completes = item.completes
        if item.response is None:
            continue
        if item.error is not None and completes:
            yield Failure(f"no lm/responseComplete for {_said(item)}, which failed", f"{len(completes)}",
                          str(completes[0]))
        elif item.error is None and len(completes) != 1:
            yield Failure(f"exactly one lm/responseComplete for {_said(item)}", f"{len(completes)}",
                          str(completes[1]) if completes else str(item.response))


@check("vscodelm.turn.complete_before_result", level=Level.MUST, applies=vscodelm_chat, ref=SYMPOSIUM_VSCODELM_SESSION,
       title="a chat request's result comes after its lm/responseComplete", proven_by=("result-before-complete",))
def complete_before_result(observed: BridgeObserved) -> Iterator[Failure]:
    # The result ends the request for the client: a complete after it is for a request it has forgotten.
    order = position(observed)
    for item in chat_requests(observed, cancelled=True):
        response, completes = item.response, item.completes
        if response is not None and completes and order[id(completes[0])] > order[id(response)]:
            yield Failure(f"lm/responseComplete, then the result of {_said(item)}", "the result first",
                          str(completes[0]))


@check("vscodelm.turn.no_part_after_complete", level=Level.MUST, applies=vscodelm_chat, ref=SYMPOSIUM_VSCODELM_SESSION,
       title="no part of a request follows its lm/responseComplete or its response", proven_by=("part-after-complete",))
def no_part_after_complete(observed: BridgeObserved) -> Iterator[Failure]:
    order = position(observed)
    for item in chat_requests(observed, cancelled=True):
        ends = [order[id(message)] for message in (*item.completes, *item.responses)]
        if not ends:
            continue
        for part in item.parts:
            if order[id(part)] > min(ends):
                yield Failure(f"no part of {_said(item)} after its end", "a part", str(part))


@check("vscodelm.turn.request_id_echoed", level=Level.MUST, applies=vscodelm_chat, ref=SYMPOSIUM_VSCODELM,
       title="a part's or complete's `requestId` is its request's id, with the same JSON type",
       proven_by=("request-id-as-string",))
def request_id_echoed(observed: BridgeObserved) -> Iterator[Failure]:
    # The extension keys its pending requests by the id it sent: 7 and "7" are different keys in a Map.
    for message in notifications(observed):
        params = message.value.get("params")
        if not isinstance(params, dict) or "requestId" not in params:
            yield Failure("a `requestId`", "none", str(message))
        elif wrong := unsent(observed, params["requestId"], "requestId"):
            yield Failure(*wrong, str(message))


@check("vscodelm.parts.known_type", level=Level.MUST, applies=vscodelm_chat, ref=SYMPOSIUM_VSCODELM,
       title="every part is a `text` part or a `tool_call` part, with the fields of its type",
       proven_by=("unknown-part-type",))
def known_type(observed: BridgeObserved) -> Iterator[Failure]:
    # The extension turns each part into a LanguageModelTextPart or LanguageModelToolCallPart; any other is dropped
    # (or fails to deserialize), and what it said is lost.
    for message in notifications(observed):
        if message.value.get("method") != RESPONSE_PART:
            continue
        why = well_formed_part(part_of(message))
        if why:
            yield Failure("a text part {value} or a tool_call part {toolCallId, toolName, parameters}", why,
                          str(message))


def _is_call(message) -> bool:
    part = part_of(message)
    return isinstance(part, dict) and part.get("type") == "tool_call"


@check("vscodelm.tools.call_last", level=Level.MUST, applies=vscodelm_with_tools, ref=SYMPOSIUM_VSCODELM_SESSION,
       title="a tool call ends its answer: after a tool_call part, only other tool_call parts",
       proven_by=("tool-call-not-last",))
def call_last(observed: BridgeObserved) -> Iterator[Failure]:
    # VS Code runs the tool once the response ends and sends its result in the next request: text after the call
    # belongs to no turn the client will send back.
    for item in chat_requests(observed, cancelled=True):
        parts = item.answer_parts  # a part after the answer closed is `no_part_after_complete`'s
        first_call = next((index for index, part in enumerate(parts) if _is_call(part)), None)
        if first_call is None:
            continue
        for part in parts[first_call + 1:]:
            if not _is_call(part):
                yield Failure(f"nothing but tool calls after the first tool_call part of {_said(item)}",
                              "another part", str(part))
                break


@check("vscodelm.tools.call_id_unique", level=Level.MUST, applies=vscodelm_with_tools, ref=VSCODE_LM_PROVIDER,
       title="every toolCallId the bridge sends is new", proven_by=("tool-call-id-repeated",))
def call_id_unique(observed: BridgeObserved) -> Iterator[Failure]:
    # A tool result names its call by id: a reused id makes a later result answer an earlier call.
    seen: dict[str, str] = {}
    for message in notifications(observed):
        if not _is_call(message):
            continue
        call_id = part_of(message).get("toolCallId")
        key = json.dumps(call_id)
        if key in seen:
            yield Failure("a toolCallId not sent before", f"{key} again (first: {seen[key]})", str(message))
        else:
            seen[key] = f"stdout line #{message.lines[0].index}"


@check("vscodelm.tools.result_continues", level=Level.MUST, applies=vscodelm_tool_result, ref=SYMPOSIUM_VSCODELM_SESSION,
       title="a request carrying the tool_result of the bridge's call is answered with the agent's continuation",
       proven_by=("tool-result-refused",))
def result_continues(observed: BridgeObserved) -> Iterator[Failure]:
    judged = 0
    for turn in observed.case.turns:
        if not turn.answers_call_of:
            continue
        item = next((item for item in asked(observed) if item.name == turn.name), None)
        if item is None:
            continue  # the turn could not be sent: its call never came
        judged += 1
        if item.error is not None or item.response is None:
            yield Failure(f"parts, a complete and the result for {_said(item)}", item.exchange.status_text,
                          str(item.response or ""))
        elif not item.parts:
            yield Failure(f"at least one part for {_said(item)}", "none before its result", str(item.response))
    if not judged:
        raise NotApplicable("no tool call was answered: the first answer made none")


