"""Faults and variants of reasoning in chat completions, and of JSON mode: where the reasoning goes (the text, a tag
the template opened, tags cut between chunks, two field names), what becomes of a previous turn's reasoning sent
back, and a `json_object` format accepted and ignored. The variants are the legal forms around them: no reasoning,
empty reasoning, DeepSeek's field name, and a model that refuses what was asked as JSON.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.responses import JSONResponse, Response

from lmconform.apis.chat.reference import stages
from lmconform.apis.chat.reference.faults.defects import Line
from lmconform.reference.faults.registry import fault, flag, variant
from lmconform.reference.model import Plan

# The members an assistant message sends its reasoning back in: vLLM's and LM Studio's name, and DeepSeek's.
REASONING_MEMBERS = ("reasoning", "reasoning_content")

REASONING_INPUT_REFUSED = flag(
    "reasoning-input-refused", api="chat",
    summary="a request whose assistant message carries its reasoning (`reasoning` or `reasoning_content`) is "
            "refused 400",
    seen_in="servers that validate messages against OpenAI's fields only; agents send reasoning back for "
            "DeepSeek's thinking mode (anomalyco/opencode#24722)")
REASONING_EFFORT_500 = flag(
    "reasoning-effort-500", api="chat", summary="a request with `reasoning_effort` gets HTTP 500",
    seen_in="servers that pass the option to a chat template or engine without it (lmconform's own reasoning cases)")


def carries_reasoning(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") == "assistant" and any(
        isinstance(message.get(name), str) for name in REASONING_MEMBERS)


def refused_reasoning_input(body: dict[str, Any], faults: frozenset[str]) -> str | None:
    """The 400 message of reasoning-input-refused for this request, or None."""
    if REASONING_INPUT_REFUSED not in faults:
        return None
    for position, message in enumerate(body["messages"]):
        if carries_reasoning(message):
            name = next(name for name in REASONING_MEMBERS if name in message)
            return f"'messages[{position}].{name}' is not a known field"
    return None


def effort_crash(body: dict[str, Any], faults: frozenset[str]) -> Response | None:
    if REASONING_EFFORT_500 in faults and body.get("reasoning_effort") is not None:
        return JSONResponse({"error": "Internal server error"}, status_code=500)
    return None


def _delta(line: Line) -> dict[str, Any]:
    choices = line.get("choices") if isinstance(line, dict) else None
    return choices[0]["delta"] if choices else {}


def _each_holder(rendered: dict[str, Any], change: Any) -> dict[str, Any]:
    """A chunk or body with `change` applied to each choice's delta or message: what carries reasoning."""
    return {**rendered, "choices": [{**choice, **{key: change(choice[key]) for key in ("delta", "message")
                                                  if isinstance(choice.get(key), dict)}}
                                    for choice in rendered.get("choices", [])]}


def _deepseek_named(holder: dict[str, Any]) -> dict[str, Any]:
    return {("reasoning_content" if key == "reasoning" else key): value for key, value in holder.items()}


def _last_prompt_changed(body: dict[str, Any], change: Any) -> dict[str, Any]:
    """The request with `change` applied to its last message's text, when that is a user's plain string: what the
    model reads as the prompt."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return body
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user" or not isinstance(last.get("content"), str):
        return body
    return {**body, "messages": [*messages[:-1], {**last, "content": change(last["content"])}]}


def _with_delta(line: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    return {**line, "choices": [{**line["choices"][0], "delta": delta}]}


@fault("think-close-only", stages.PLAN, api="chat",
       summary="reasoning is sent as the start of `content`, ended by a lone `</think>`: the chat template opened "
               "the tag in the prompt (stream and non-stream)",
       seen_in="templates that end the prompt with `<think>` (DeepSeek-R1 distills, QwQ) on servers without a "
               "reasoning parser")
def think_close_only(plan: Plan) -> Plan:
    if not plan.reasoning:
        return plan
    return replace(plan, text=f"{plan.reasoning}\n</think>\n\n{plan.text}", reasoning=None)


@fault("think-tags-split", stages.STREAM, api="chat",
       summary="reasoning is streamed in `content` between `<think>` and `</think>`, each tag cut across two chunks "
               "(`<thi`, `nk>`) (stream only)",
       seen_in="servers that stream tokens as they come: a tag is often several tokens")
def think_tags_split(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    state = "before"  # before the reasoning, in it, or after it
    for line in lines:
        delta = _delta(line)
        if isinstance(line, dict) and "reasoning" in delta:
            if state == "before":
                out += [_with_delta(line, {"content": "<thi"}), _with_delta(line, {"content": "nk>"})]
                state = "in"
            out.append(_with_delta(line, {"content": delta["reasoning"]}))
            continue
        if state == "in" and isinstance(line, dict) and line.get("choices"):
            out += [_with_delta(line, {"content": "</th"}), _with_delta(line, {"content": "ink>"})]
            state = "after"
        out.append(line)
    return out


@fault("reasoning-repeated-in-content", stages.PLAN, api="chat",
       summary="the reasoning is sent in its field and again at the start of `content` (stream and non-stream)",
       seen_in="reasoning parsers that copy the thought instead of moving it")
def reasoning_repeated_in_content(plan: Plan) -> Plan:
    return replace(plan, text=f"{plan.reasoning}\n\n{plan.text}") if plan.reasoning else plan


@fault("reasoning-fields-mixed", stages.STREAM, api="chat",
       summary="reasoning deltas switch names: every other one is `reasoning_content` instead of `reasoning` "
               "(stream only)",
       seen_in="servers part way through vLLM's rename of `reasoning_content` to `reasoning` (vLLM reasoning "
               "outputs docs)")
def reasoning_fields_mixed(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    seen = 0
    for line in lines:
        delta = _delta(line)
        if isinstance(line, dict) and "reasoning" in delta:
            seen += 1
            if seen % 2 == 0:
                line = _with_delta(line, _deepseek_named(delta))
        out.append(line)
    return out


@fault("reasoning-input-echoed", stages.REQUEST, api="chat",
       summary="the reasoning an assistant message sends back is read as part of the prompt, and answered "
               "(stream and non-stream)",
       seen_in="chat templates that render every member of a message into the prompt")
def reasoning_input_echoed(body: Any) -> Any:
    messages = body.get("messages") if isinstance(body, dict) else None
    carried = [message[name] for message in messages if carries_reasoning(message) for name in REASONING_MEMBERS
               if isinstance(message.get(name), str)] if isinstance(messages, list) else []
    return _last_prompt_changed(body, lambda prompt: f"{carried[-1]} {prompt}") if carried else body


@fault("json-object-ignored", stages.REQUEST, api="chat",
       summary='`response_format: {"type": "json_object"}` is accepted and ignored: the answer is prose '
               "(stream and non-stream)",
       seen_in="servers that drop response formats they do not implement (ollama#8063 for schemas)")
def json_object_ignored(body: Any) -> Any:
    response_format = body.get("response_format") if isinstance(body, dict) else None
    if isinstance(response_format, dict) and response_format.get("type") == "json_object":
        return {key: value for key, value in body.items() if key != "response_format"}
    return body


@variant("reasoning-absent", stages.PLAN, api="chat",
         summary="no reasoning although `reasoning_effort` asked for it (stream and non-stream)",
         seen_in="every model that does not reason (llama-server with Gemma 3); the effort is a hint")
def reasoning_absent(plan: Plan) -> Plan:
    return replace(plan, reasoning=None)


@variant("reasoning-empty", stages.OBJECT, api="chat",
         summary='every delta and message without reasoning carries `"reasoning": ""` (stream and non-stream)',
         seen_in="servers that always send the member; an empty string adds nothing")
def reasoning_empty(rendered: dict[str, Any]) -> dict[str, Any]:
    return _each_holder(rendered, lambda holder: holder if holder.get("reasoning") else {**holder, "reasoning": ""})


@variant("reasoning-content-field", stages.OBJECT, api="chat",
         summary="reasoning is named `reasoning_content`, not `reasoning`, in deltas and messages "
                 "(stream and non-stream)",
         seen_in="DeepSeek's API, llama.cpp's llama-server, vLLM before its rename, LM Studio's R1 opt-in (0.3.9 "
                 "changelog)")
def reasoning_content_field(rendered: dict[str, Any]) -> dict[str, Any]:
    return _each_holder(rendered, _deepseek_named)


@variant("json-answers-refused", stages.REQUEST, api="chat",
         summary="the model refuses every answer asked for as JSON: a `refusal`, no content (stream and non-stream)",
         seen_in="OpenAI's structured outputs guide (a refusal is how a model declines under a schema)")
def json_answers_refused(body: Any) -> Any:
    response_format = body.get("response_format") if isinstance(body, dict) else None
    if isinstance(response_format, dict) and str(response_format.get("type")).startswith("json_"):
        return _last_prompt_changed(body, lambda prompt: f"{prompt} (refuse)")
    return body
