"""Which cases the Responses checks judge, decided from the case alone."""

from __future__ import annotations

import re
from collections.abc import Callable

from lmconform.apis.responses import API
from lmconform.cases import FIRST, Case, HttpTurn
from lmconform.checks.scope import long_prompt_stream

COUNT_PATH, COMPACT_PATH = f"{API.path}/input_tokens", f"{API.path}/compact"


def _nested(tool) -> bool:
    return isinstance(tool, dict) and "function" in tool and "name" not in tool


def responses_answer(case: Case) -> bool:
    """A request to create a response (not to count or compact one) that is not invalid."""
    return (case.api == "responses" and not case.invalid and case.path.partition("?")[0] == API.path
            and case.websocket is None)


def responses_websocket(*scenarios: str):
    """The cases of the WebSocket mode (of these scenarios, or of any)."""
    def applies(case: Case) -> bool:
        return case.api == "responses" and case.websocket is not None and (not scenarios or case.websocket in scenarios)

    applies.__name__ = f"responses_websocket({', '.join(scenarios) or 'any'})"
    return applies


def responses_counts(case: Case) -> bool:
    return case.api == "responses" and case.valid and case.path == COUNT_PATH


def responses_compacts(case: Case) -> bool:
    return case.api == "responses" and case.valid and case.path == COMPACT_PATH


def responses_compaction_round_trip(case: Case) -> bool:
    """A compaction sent back as input on a later turn (`compaction_of`)."""
    return responses_compacts(case) and any(turn.compaction_of for turn in case.turns_of(HttpTurn))


def grammar_tools(case: Case) -> dict[str, dict]:
    """The custom tools of the request whose input a grammar defines (`format.type` "grammar"), by name."""
    return {tool["name"]: tool["format"] for tool in case.tools if isinstance(tool, dict) and tool.get("type") == "custom"
            and isinstance(tool.get("name"), str) and isinstance(tool.get("format"), dict)
            and tool["format"].get("type") == "grammar"}


def responses_grammar_tool(case: Case) -> bool:
    return responses_answer(case) and bool(grammar_tools(case))


def responses_streamed(case: Case) -> bool:
    return responses_answer(case) and case.streamed


def responses_long_prompt_stream(case: Case) -> bool:
    return responses_streamed(case) and long_prompt_stream(case)


def responses_body(case: Case) -> bool:
    return responses_answer(case) and not case.streamed


def _answers_a_call(case: Case) -> bool:
    """The input ends with a function_call_output: the model is to use the result, not to call again."""
    items = case.body.get("input") if isinstance(case.body, dict) else None
    return isinstance(items, list) and bool(items) and isinstance(items[-1], dict) \
        and items[-1].get("type") == "function_call_output"


def _name_words(name) -> set[str]:
    """The words of a tool name a request would use to ask for it: `get_weather`, `getWeather` → weather (and get,
    but words under four letters are too common to count as asking)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name) if isinstance(name, str) else ""
    return {word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if len(word) >= 4}


def _input_text(case: Case) -> str:
    """What the input says: its text, not the names of its fields or their enumerations (a role `user` asks for no
    tool named `User`)."""
    given = case.body.get("input") if isinstance(case.body, dict) else None
    return " ".join(_said(given))


def _said(value, key: str = "content") -> list[str]:
    if isinstance(value, str):
        return [value] if key in ("content", "text", "output") else []
    if isinstance(value, list):
        return [text for item in value for text in _said(item, key)]
    if isinstance(value, dict):
        return [text for name, item in value.items() for text in _said(item, name)]
    return []


def asks_for_a_tool(case: Case) -> bool:
    """A call is due: `tool_choice` forces one, or the input asks for a tool by a word of its name."""
    choice = case.tool_choice
    if choice == "required" or isinstance(choice, dict):
        return True
    said = set(re.findall(r"[a-z0-9]+", _input_text(case).lower()))
    return choice != "none" and any(_name_words(tool.get("name")) & said for tool in case.tools
                                    if isinstance(tool, dict))


def responses_flattened_tools(case: Case) -> bool:
    return (responses_answer(case) and case.valid and bool(case.tools) and not any(map(_nested, case.tools))
            and case.tool_type is None
            and not _answers_a_call(case) and asks_for_a_tool(case))


def responses_tool_type(case: Case) -> bool:
    """A case of the tool-type matrix: a Responses tool type beside `function`, graded."""
    return responses_answer(case) and case.tool_type is not None


def responses_replay(case: Case) -> bool:
    """A stateless replay: the whole transcript in `input` with `store: false`, and its last user message sent alone
    in the turn `alone`."""
    return responses_answer(case) and case.replay is not None


def responses_nested_tools(case: Case) -> bool:
    return responses_answer(case) and bool(case.tools) and any(map(_nested, case.tools))


def _continuing(case: Case) -> list:
    """Turns that continue an earlier answer with new input (not those that answer a function call, nor those that
    continue an answer the server must have forgotten)."""
    return [turn for turn in case.turns_of(HttpTurn) if turn.previous and not turn.answers_call_of
            and not chains_to_forgotten(case, turn)]


def responses_chain(case: Case) -> bool:
    return responses_answer(case) and case.valid and bool(_continuing(case))


def responses_recall(case: Case) -> bool:
    return responses_chain(case) and any(turn.recall for turn in case.turns_of(HttpTurn))


def responses_function_call_output(case: Case) -> bool:
    return responses_answer(case) and any(turn.answers_call_of for turn in case.turns_of(HttpTurn))


def responses_unknown_previous(case: Case) -> bool:
    """The case's request names a previous_response_id that was never issued, or one of its turns does, or chains
    to a response the server must have forgotten."""
    return case.api == "responses" and case.websocket is None and ((case.invalid and case.previous_response_id is not None)
                                        or any(turn.unknown_previous_id for turn in case.turns_of(HttpTurn))
                                        or any(chains_to_forgotten(case, turn) for turn in case.turns_of(HttpTurn)))


# --- stored state: what the server keeps of a response, and for how long -------------------------------------------

def _unstored(case: Case, name: str) -> bool:
    """Whether the request (FIRST) or turn `name` asked not to be stored: a turn has the request's fields but its
    own."""
    body = case.body if isinstance(case.body, dict) else {}
    turn = next((turn for turn in case.turns_of(HttpTurn) if turn.name == name), None)
    return (turn.body.get("store", body.get("store")) if turn is not None else body.get("store")) is False


def forgotten(case: Case, before: HttpTurn, deleted: Callable[[HttpTurn], bool] = lambda turn: True) -> dict[str, str]:
    """The answers the server must no longer know when `before` is sent, each with why: created with `store:
    false`, or deleted by an earlier DELETE turn (one that `deleted` says did delete)."""
    gone = {FIRST: "created with `store: false`"} if _unstored(case, FIRST) else {}
    turns = case.turns_of(HttpTurn)
    for turn in turns[:turns.index(before)]:
        if _unstored(case, turn.name):
            gone[turn.name] = "created with `store: false`"
        if turn.method == "DELETE" and deleted(turn):
            gone.update((name, f"deleted by the turn {turn.name!r}") for name in turn.named)
    return gone


def chains_to_forgotten(case: Case, turn: HttpTurn) -> bool:
    return bool(turn.previous) and turn.previous in forgotten(case, turn)


def _requests(case: Case, method: str, items: bool = False) -> list[HttpTurn]:
    """The turns of `method` to a stored response (`/input_items` with `items`)."""
    return [turn for turn in case.turns_of(HttpTurn) if turn.method == method and turn.path is not None
            and turn.path.endswith("/input_items") == items]


def responses_reads(case: Case) -> bool:
    return responses_answer(case) and bool(_requests(case, "GET"))


def responses_deletes(case: Case) -> bool:
    return responses_answer(case) and bool(_requests(case, "DELETE"))


def responses_input_items(case: Case) -> bool:
    return responses_answer(case) and bool(_requests(case, "GET", items=True))


def responses_forgets(case: Case) -> bool:
    """A GET names a response the server must have forgotten."""
    return responses_answer(case) and any(set(turn.named) & set(forgotten(case, turn)) for turn in case.turns_of(HttpTurn)
                                          if turn.method == "GET")


def responses_tool_choice_required(case: Case) -> bool:
    return responses_answer(case) and bool(case.tools) and case.tool_choice == "required"
