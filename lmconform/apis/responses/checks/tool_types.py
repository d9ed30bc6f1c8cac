"""The tool-type matrix of `/v1/responses`: what a server does with each tool type beside `function` that Codex
sends. Honoured: a call of a namespace's function comes back as a `function_call` naming its `namespace`, a custom
tool's as a `custom_tool_call` with its `input`, and the call's output, sent back on the next turn as Codex sends it,
is read; a hosted tool is accepted and echoed. Refused: a 4xx, for the tool or for its call's output, a limit that
costs Codex what the tool does. Dropped: a 200 and the tool can never be called, its call comes back in an item Codex
does not route to it, or its output is accepted and forgotten."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.apis.responses.checks.chain import input_tokens
from lmconform.apis.responses.checks.scope import grammar_tools, responses_grammar_tool, responses_tool_type
from lmconform.apis.responses.checks.views import final_response
from lmconform.apis.responses.normalize import response_object
from lmconform.checks.observed import Observed
from lmconform.checks.refs import OPENAI_RESPONSES_TOOL_TYPES
from lmconform.checks.registry import check
from lmconform.schemas.grammar import in_grammar
from lmconform.vocabulary import Failure, Grade, Level, Note

EVIDENCE_CHARS = 240
MATRIX = "tool_type"  # the member of a results row the grade travels in
# What Codex loses when a server refuses the type, in the words of its users.
COSTS = {
    "namespace": "Codex cannot call its MCP servers' tools nor its sub-agents",
    "custom": "Codex cannot edit a file: apply_patch is a custom tool",
    "web_search": "Codex cannot search the web (`web_search` off in its config)",
    "tool_search": "Codex cannot find its deferred tools",
    "local_shell": "Codex's older models cannot run a command",
    "image_generation": "Codex cannot make an image",
    "mcp": "Codex cannot reach a remote MCP server through the provider",
}

# The turns of a called tool's case: the call and its output sent back with a question (`output`), and the same turn
# with the output empty, whose input tokens the output's must exceed for the output to have been read (a server that
# drops the output item, or reads the transcript from its last user message, answers both alike).
OUTPUT_TURN, CONTROL_TURN = "output", "empty-output"
ANSWERED = ("completed", "incomplete")  # a response that ended in an answer; "failed", or none at all, did not

# The ids an answer draws afresh each time: a grade's evidence, which the matrix pages publish, leaves them out.
RUN_IDS = ("id", "call_id")


def _shown(item: dict) -> str:
    """An honoured call as evidence: the item without the ids it draws each time."""
    return json.dumps({key: value for key, value in item.items() if key not in RUN_IDS})[:EVIDENCE_CHARS]


def _type_of(family: str) -> str:
    """The `type` of the tool a family grades: "custom (grammar)" is a custom tool."""
    return family.split(" ", 1)[0]


def _items(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in response.get("output") or [] if isinstance(item, dict)]


def _namespace_dropped(tool: dict[str, Any], response: dict[str, Any]) -> tuple[str | None, str]:
    """Why a namespace's function cannot be called through this answer (None: it was), and the evidence."""
    namespace = tool.get("name")
    names = {function.get("name") for function in tool.get("tools") or [] if isinstance(function, dict)}
    calls = [item for item in _items(response) if item.get("type") == "function_call"]
    for call in calls:
        if call.get("namespace") == namespace and call.get("name") in names:
            return None, _shown(call)
    leaked = next((call for call in calls if any(str(call.get("name", "")).endswith(str(name)) for name in names)),
                  None)
    if leaked is not None:
        lost = "the namespace lost" if leaked.get("name") in names else "the namespace flattened into the name"
        return (f"a function_call named {leaked.get('name')!r} with namespace {leaked.get('namespace')!r}: {lost}, "
                "so no tool of the request answers to it"), json.dumps(leaked)
    return "no call of the namespace's functions: the tool was dropped", json.dumps(_items(response))


def _custom_dropped(tool: dict[str, Any], response: dict[str, Any]) -> tuple[str | None, str]:
    name = tool.get("name")
    for item in _items(response):
        if item.get("name") != name:
            continue
        if item.get("type") == "custom_tool_call" and isinstance(item.get("input"), str):
            return None, _shown(item)
        return (f"a {item.get('type')} item, not a custom_tool_call with a string `input`: the call in the wrong "
                "item type"), json.dumps(item)
    return "no call of the custom tool: the tool was dropped", json.dumps(_items(response))


def _hosted_dropped(tool: dict[str, Any], response: dict[str, Any]) -> tuple[str | None, str]:
    echoed = [entry for entry in response.get("tools") or [] if isinstance(entry, dict)]
    if any(entry.get("type") == tool.get("type") for entry in echoed):
        return None, f"accepted and echoed in `tools`: {json.dumps(echoed)[:EVIDENCE_CHARS]}"
    return "the response's `tools` does not echo it: the tool was dropped", json.dumps(response.get("tools"))


def _dropped(tool: dict[str, Any], response: dict[str, Any]) -> tuple[str | None, str]:
    judge = {"namespace": _namespace_dropped, "custom": _custom_dropped}.get(tool.get("type", ""), _hosted_dropped)
    return judge(tool, response)


def _output_taken(observed: Observed) -> tuple[str, str]:
    """What became of the call's output sent back on the next turn: ("taken" | "refused" | "forgotten" | "failed" |
    "unmeasured", in words). Measured as responses.replay.history_used measures a replay, whatever the model then
    says: the turn costs more input tokens than the same turn whose output is empty, or the output was not read."""
    played, control = observed.turns.get(OUTPUT_TURN), observed.turns.get(CONTROL_TURN)
    if played is None or played.exchange is None:
        return "unmeasured", "its output not sent back" + (f" ({played.skipped})" if played is not None else "")
    exchange = played.exchange
    status = exchange.status or 0
    if 400 <= status < 500:
        return "refused", f"its output refused on the next turn: HTTP {status}: {exchange.body_excerpt(EVIDENCE_CHARS)}"
    response = response_object(exchange) if exchange.succeeded else {}
    if response.get("status") not in ANSWERED:
        came = exchange.error or f"HTTP {status}" + (f", a response {response.get('status')!r}" if response else "")
        return "failed", f"its output sent back got no answer ({came}): {exchange.body_excerpt(200)}"
    control_exchange = control.exchange if control is not None else None
    control_response = response_object(control_exchange) if control_exchange is not None \
        and control_exchange.succeeded else {}
    if control_response.get("status") not in ANSWERED:
        came = f"HTTP {control_exchange.status}" if control_exchange is not None else \
            (control.skipped or "not sent") if control is not None else "not in the case"
        return "unmeasured", ("its output sent back answered (whether it was read is not measured: the same turn with "
                              f"an empty output got no answer, {came})")
    with_output, without = input_tokens(response), input_tokens(control_response)
    if with_output is None or without is None:
        return "unmeasured", "its output sent back answered (whether it was read is not measured: no usage.input_tokens)"
    if with_output <= without:
        return "forgotten", (f"its output sent back accepted with a 200 and forgotten: {with_output} input tokens, no "
                             f"more than the same turn with an empty output ({without})")
    return "taken", f"its output taken on the next turn ({with_output} input tokens, {without} with an empty output)"


@check("responses.tools.type_graded", level=Level.MUST, applies=responses_tool_type, ref=OPENAI_RESPONSES_TOOL_TYPES,
       title="a tool type beside `function` is honoured (its call in its own item type and its output read on the next "
             "turn, a hosted tool echoed) or refused with a 4xx, never dropped behind a 200",
       proven_by=("tool-types-dropped", "custom-call-as-function-call", "namespace-flattened", "replay-forgotten"))
def type_graded(observed: Observed) -> Iterator[Failure | Grade]:
    # A refusal is a limit the server states, graded and not failed: Codex then says what it cannot do. A 200 that
    # drops the tool is a failure: Codex waits for a call that never comes, or gets prose where a patch was due.
    family, exchange = observed.case.tool_type or "", observed.exchange
    kind = _type_of(family)
    status = exchange.status or 0
    if 400 <= status < 500:
        said = exchange.body_excerpt(EVIDENCE_CHARS)
        named = "names" if kind in said or "tools." in said or "tools[" in said else "does not name"
        yield Grade(family, "refused", f"HTTP {status}, which {named} the tool: {said}. {COSTS[kind]}", MATRIX)
        return
    if not observed.succeeded:
        yield Failure("a 200 that honours the tool, or a 4xx that refuses it", f"HTTP {status}",
                      exchange.body_excerpt())
        return
    body = observed.request_body if isinstance(observed.request_body, dict) else {}
    tool = next((tool for tool in body.get("tools") or [] if isinstance(tool, dict) and tool.get("type") == kind), {})
    problem, evidence = _dropped(tool, final_response(observed))
    if problem is not None:
        yield Grade(family, "dropped", problem, MATRIX)
        yield Failure(f"the {kind} tool honoured, or the request refused with a 4xx", f"HTTP {status} and {problem}",
                      evidence[:400])
        return
    if not any(turn.name == OUTPUT_TURN for turn in observed.case.turns):
        yield Grade(family, "honoured", evidence, MATRIX)
        return
    # A called tool is honoured only when its result can come back: Codex sends it on the next turn, as written here.
    taken, said = _output_taken(observed)
    played = observed.turns.get(OUTPUT_TURN)
    sent_back = played.exchange if played is not None else None
    if taken == "refused":
        yield Grade(family, "refused", f"its call honoured ({evidence}), but {said}. {COSTS[kind]}", MATRIX)
    elif taken in ("taken", "unmeasured"):
        yield Grade(family, "honoured", f"{evidence}; {said}", MATRIX)
    else:
        # Forgotten is the tool dropped behind a 200; a turn that got no answer is a failure the matrix has no grade for.
        if taken == "forgotten":
            yield Grade(family, "dropped", said, MATRIX)
        yield Failure(f"the {kind} tool's output sent back read, or refused with a 4xx", said,
                      # The run's curl is the first request's: the turn that sent the output back is its own.
                      f"{sent_back.body_excerpt(300)}\nReproduce the turn: {sent_back.request.reproduction()}"
                      if sent_back is not None else "")


@check("responses.tools.grammar_input_conforms", level=Level.SHOULD, applies=responses_grammar_tool,
       ref=OPENAI_RESPONSES_TOOL_TYPES,
       title="a grammar tool's `custom_tool_call` carries an `input` its grammar takes (regex matched whole; Lark "
             "parsed where the lark library loads the grammar)",
       proven_by=("grammar-input-unconstrained",))
def grammar_input_conforms(observed: Observed) -> Iterator[Failure | Note]:
    # SHOULD, as a strict function's arguments (generation.tool_call.arguments_conform): Codex's apply_patch refuses a
    # patch outside its grammar and the model tries again; OpenAI decodes within the grammar, a server may not.
    observed.require_success()
    grammars = grammar_tools(observed.case)
    for item in final_response(observed).get("output") or []:
        if not isinstance(item, dict) or item.get("type") != "custom_tool_call" or item.get("name") not in grammars:
            continue
        grammar, given = grammars[item["name"]], item.get("input")
        if not isinstance(given, str):
            yield Failure(f"a string `input` for {item['name']}", f"input {given!r}", _shown(item))
            continue
        match = in_grammar(grammar.get("syntax"), grammar.get("definition"), given)
        if match.matches is None:
            yield Note(f"{item['name']}'s input is not checked: {match.why}")
        elif not match.matches:
            yield Failure(f"an input the {grammar.get('syntax')} grammar of {item['name']} takes",
                          f"{given[:EVIDENCE_CHARS]!r}: {match.why}", _shown(item))
