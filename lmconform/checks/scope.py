"""Which cases a check applies to, decided from the case alone (what was asked, not what came back)."""

from __future__ import annotations

import re

from lmconform.apis import api_of
from lmconform.cases import Case
from lmconform.normalize.vscodelm import CANCEL, CHAT_RESPONSE
from lmconform.target import HTTP


def any_case(case: Case) -> bool:
    return True


def agent_case(case: Case) -> bool:
    """A coding agent's run, or a request it sent (lmconform.fuzz.agents)."""
    return case.agent is not None


def over_http(case: Case) -> bool:
    return api_of(case.api).transport == HTTP


def valid_request(case: Case) -> bool:
    return case.valid and over_http(case)


def invalid_request(case: Case) -> bool:
    return case.invalid and over_http(case)


def refusal_expected(case: Case) -> bool:
    """The request, or one of the turns (an unknown previous_response_id), is to be refused with an error body."""
    return over_http(case) and (case.invalid or any(turn.unknown_previous_id for turn in case.turns))


def streamed(case: Case) -> bool:
    return case.streamed and not case.invalid


def generates(case: Case) -> bool:
    """A request that may be answered with a generation (valid, or one servers may accept), on any API."""
    api = api_of(case.api)
    return api.generates and not case.invalid and case.method == api.method and case.raw_body is None


def generates_with_tools(case: Case) -> bool:
    return generates(case) and bool(case.tools)


def chat_answer(case: Case) -> bool:
    return case.api == "chat" and not case.invalid


def chat_body(case: Case) -> bool:
    return chat_answer(case) and not case.streamed


def chat_streamed(case: Case) -> bool:
    return chat_answer(case) and case.streamed


def chat_streamed_with_tools(case: Case) -> bool:
    return chat_streamed(case) and bool(case.tools)


def chat_with_tools(case: Case) -> bool:
    return chat_answer(case) and bool(case.tools)


def chat_streamed_asking_usage(case: Case) -> bool:
    return chat_streamed(case) and case.asks_usage


def tool_choice_is(value: str):
    def applies(case: Case) -> bool:
        return chat_with_tools(case) and case.tool_choice == value

    applies.__name__ = f"tool_choice_is_{value}"
    return applies


def tool_choice_object(case: Case) -> bool:
    return chat_with_tools(case) and isinstance(case.tool_choice, dict)


def models_list(case: Case) -> bool:
    return case.api == "models" and case.path == "/v1/models" and case.method == "GET"


def _nested(tool) -> bool:
    return isinstance(tool, dict) and "function" in tool and "name" not in tool


def responses_answer(case: Case) -> bool:
    return case.api == "responses" and not case.invalid


def responses_streamed(case: Case) -> bool:
    return responses_answer(case) and case.streamed


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
            and not _answers_a_call(case) and asks_for_a_tool(case))


def responses_nested_tools(case: Case) -> bool:
    return responses_answer(case) and bool(case.tools) and any(map(_nested, case.tools))


def _continuing(case: Case) -> list:
    """Turns that continue an earlier answer with new input (not those that answer a function call)."""
    return [turn for turn in case.turns if turn.previous and not turn.answers_call_of]


def responses_chain(case: Case) -> bool:
    return responses_answer(case) and case.valid and bool(_continuing(case))


def responses_recall(case: Case) -> bool:
    return responses_chain(case) and any(turn.recall for turn in case.turns)


def responses_function_call_output(case: Case) -> bool:
    return responses_answer(case) and any(turn.answers_call_of for turn in case.turns)


def responses_unknown_previous(case: Case) -> bool:
    """The case's request names a previous_response_id that was never issued, or one of its turns does."""
    return case.api == "responses" and ((case.invalid and case.previous_response_id is not None)
                                        or any(turn.unknown_previous_id for turn in case.turns))


def vscodelm(case: Case) -> bool:
    return case.api == "vscodelm"


def vscodelm_valid(case: Case) -> bool:
    return vscodelm(case) and case.valid


def vscodelm_invalid(case: Case) -> bool:
    return vscodelm(case) and case.invalid


def vscodelm_chat(case: Case) -> bool:
    """A valid case that asks the bridge for at least one answer."""
    return vscodelm_valid(case) and CHAT_RESPONSE in case.methods


def vscodelm_with_tools(case: Case) -> bool:
    return vscodelm_chat(case) and bool(case.tools)


def vscodelm_tool_result(case: Case) -> bool:
    return vscodelm_chat(case) and any(turn.answers_call_of for turn in case.turns)


def vscodelm_commit(case: Case) -> bool:
    """A turn whose history is an earlier turn's, its answer as it came, and more."""
    return vscodelm_chat(case) and any(turn.previous and not turn.answers_call_of and turn.edited_answer is None
                                       for turn in case.turns)


def vscodelm_discard(case: Case) -> bool:
    return vscodelm_chat(case) and any(turn.edited_answer is not None for turn in case.turns)


def vscodelm_cancel(case: Case) -> bool:
    return vscodelm_chat(case) and any(turn.cancels for turn in case.turns)


def vscodelm_cancel_unknown(case: Case) -> bool:
    """A cancel whose requestId is written in the case: an id the bridge never answered."""
    return vscodelm_valid(case) and ((case.method == CANCEL and case.raw_body is None)
                                     or any(turn.method == CANCEL and not turn.cancels for turn in case.turns))


def vscodelm_method(method: str):
    def applies(case: Case) -> bool:
        return vscodelm_valid(case) and case.method == method and case.raw_body is None and not case.notification

    applies.__name__ = f"vscodelm_method_{method.rpartition('/')[2]}"
    return applies


def vscodelm_error_code(code: int):
    def applies(case: Case) -> bool:
        return vscodelm_invalid(case) and case.expect_code == code

    applies.__name__ = f"vscodelm_error_code_{-code}"
    return applies
def messages_answer(case: Case) -> bool:
    return case.api == "messages" and not case.invalid


def messages_streamed(case: Case) -> bool:
    return messages_answer(case) and case.streamed


def messages_not_streamed(case: Case) -> bool:
    return messages_answer(case) and not case.streamed


def messages_with_tools(case: Case) -> bool:
    return messages_answer(case) and bool(case.tools)


def messages_tool_choice_is(kind: str):
    def applies(case: Case) -> bool:
        return messages_with_tools(case) and isinstance(case.tool_choice, dict) and case.tool_choice.get("type") == kind

    applies.__name__ = f"messages_tool_choice_is_{kind}"
    return applies


def messages_parallel_disabled(case: Case) -> bool:
    return messages_with_tools(case) and isinstance(case.tool_choice, dict) \
        and case.tool_choice.get("disable_parallel_tool_use") is True


def messages_tool_result_turn(case: Case) -> bool:
    return messages_answer(case) and any(turn.answers_call_of for turn in case.turns)


def messages_asking_thinking(case: Case) -> bool:
    thinking = case.body.get("thinking") if isinstance(case.body, dict) else None
    return messages_answer(case) and isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def messages_with_stop_sequences(case: Case) -> bool:
    return messages_answer(case) and bool(isinstance(case.body, dict) and case.body.get("stop_sequences"))


def messages_refusable(case: Case) -> bool:
    """A Messages request a server may (or must) refuse: its error body is Anthropic's to shape."""
    return case.api == "messages" and not case.valid


def messages_without_max_tokens(case: Case) -> bool:
    return case.api == "messages" and "max_tokens" in case.omit \
        and not (isinstance(case.body, dict) and "max_tokens" in case.body)


def native_answer(case: Case) -> bool:
    return case.api == "native_chat" and not case.invalid


def native_streamed(case: Case) -> bool:
    return native_answer(case) and case.streamed


def native_not_streamed(case: Case) -> bool:
    return native_answer(case) and not case.streamed


def native_stored(case: Case) -> bool:
    """A native chat the server is to store (the default): its result carries a response_id."""
    return native_answer(case) and not (isinstance(case.body, dict) and case.body.get("store") is False)


def native_chain(case: Case) -> bool:
    return native_answer(case) and any(turn.previous for turn in case.turns)


def native_recall(case: Case) -> bool:
    return native_chain(case) and any(turn.recall for turn in case.turns)


def may_be_refused(case: Case) -> bool:
    """A request servers legitimately answer either way (a 2xx, or a 4xx for what they do not support)."""
    return case.expect_status == "success_or_client_error"


def _format_type(case: Case) -> str | None:
    """The output format a case asks for: chat's `response_format.type`, or Responses' `text.format.type`."""
    body = case.body if isinstance(case.body, dict) else {}
    if case.api == "chat":
        holder = body.get("response_format")
    else:
        text = body.get("text")
        holder = text.get("format") if isinstance(text, dict) else None
    kind = holder.get("type") if isinstance(holder, dict) else None
    return kind if isinstance(kind, str) else None


def asks_json(case: Case) -> bool:
    """A request that asks for JSON output (a JSON schema, or any JSON object)."""
    return generates(case) and _format_type(case) in ("json_schema", "json_object")


def chat_json_object(case: Case) -> bool:
    return chat_answer(case) and _format_type(case) == "json_object"


def chat_parallel_calls_off(case: Case) -> bool:
    return chat_with_tools(case) and case.body.get("parallel_tool_calls") is False


def responses_tool_choice_required(case: Case) -> bool:
    return responses_answer(case) and bool(case.tools) and case.tool_choice == "required"
