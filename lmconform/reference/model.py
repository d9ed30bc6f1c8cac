"""The reference server's "model": a fixed rule that decides how a chat request is answered.

Checks need answers they can predict from the request alone, so nothing here is random and nothing reads the
clock: the same request body always gets the same plan, ids included. The request is assumed valid
(each door validates it first).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from dataclasses import dataclass, replace
from typing import Any

from lmconform.reference.instances import breaking, example, unhonoured


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = "stop"
    reasoning: str | None = None  # thought before the answer, when the request asks for reasoning
    refusal: str | None = None  # said instead of the answer, when the prompt asks the model to refuse


# More words of prompt than this do not fit the model's context: the request is refused, as a real server must. It
# holds each agent's task whatever model id the agent is given (Claude Code's first request for a `claude-*` id is
# about 6,000 words), and not the request after an agent's tool has read a file of 12,000 words (Codex CLI keeps 10 KiB
# of a tool's output: its request is then about 8,150 words).
CONTEXT_WORDS = 7168


def request_seed(body: dict[str, Any]) -> int:
    """A number fixed by the request. Streaming options are left out so that the same request streamed and not
    streamed gets the same ids, which lets a differential check compare the two."""
    significant = {key: value for key, value in body.items() if key not in ("stream", "stream_options")}
    canonical = json.dumps(significant, sort_keys=True, ensure_ascii=False, default=str)
    return int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:6], "big")


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or a list of `{"type": "text", "text": ...}` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, dict)]
        return " ".join(text for text in texts if isinstance(text, str))
    return ""


def decide(body: dict[str, Any]) -> Plan:
    """The answer to a valid request: its tool calls or text (JSON when a response format asks for it), with a
    thought first when reasoning was asked for, cut at the request's output cap."""
    plan = _answer(body)
    if body.get("reasoning_effort") is not None and not plan.tool_calls:
        plan = replace(plan, reasoning=f"Thinking about: {_last_user_text(body['messages'])}")
    return capped(plan, output_cap(body))


def output_cap(body: dict[str, Any]) -> int | None:
    """The request's cap on output tokens; -1 (as Zed sends) or none is no cap."""
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else None


def capped(plan: Plan, cap: int | None) -> Plan:
    """The plan cut at `cap` words of text, finished by "length" when it reached the cap: a model stopped by the cap
    never writes the end of its turn, so a real server says "length" even when the text would have ended there."""
    words = re.findall(r"\S+\s*", plan.text)
    if cap is None or plan.tool_calls or len(words) < cap:
        return plan
    return replace(plan, text="".join(words[:cap]).rstrip(), finish_reason="length")


def stop_strings(stop: Any) -> list[str]:
    """The stop strings of a request's `stop`: one string, or a list of them."""
    return [stop] if isinstance(stop, str) else [item for item in stop if isinstance(item, str)] \
        if isinstance(stop, list) else []


def first_stop(text: str, stops: list[str]) -> tuple[int, str] | None:
    """Where the earliest of `stops` begins in `text`, and which one it is; None when none occurs."""
    found = [(text.find(stop), stop) for stop in stops if stop and stop in text]
    return min(found, key=lambda hit: hit[0]) if found else None


def stopped(plan: Plan, stop: Any) -> tuple[Plan, str | None]:
    """The plan's text cut before the first of the request's stop strings in it, finished by "stop", and the string
    that cut it (None when none occurs: the plan as it was)."""
    hit = first_stop(plan.text, stop_strings(stop))
    if hit is None or plan.tool_calls:
        return plan, None
    return replace(plan, text=plan.text[:hit[0]], finish_reason="stop"), hit[1]


PIECE_LOGPROB = -0.05  # every piece of an answer is its likeliest token; the alternatives below it
MAX_TOP_LOGPROBS = 20  # OpenAI's bound of `top_logprobs`, chat's and the Responses API's


def alternatives_of(body: dict[str, Any]) -> int:
    """How many alternatives to each token the request's `top_logprobs` asks for: 0 when it asks none, at most
    OpenAI's bound (a server that takes a larger number gives no more)."""
    top = body.get("top_logprobs")
    return min(top, MAX_TOP_LOGPROBS) if isinstance(top, int) and not isinstance(top, bool) and top > 0 else 0


def piece_logprobs(piece: str, alternatives: int) -> dict[str, Any]:
    """OpenAI's log probability of one token (chat's `logprobs.content[]`, an output_text's `logprobs[]`), made up
    but stable: the piece itself likeliest, then `alternatives` - 1 others."""
    def entry(token: str, logprob: float) -> dict[str, Any]:
        return {"token": token, "logprob": logprob, "bytes": list(token.encode())}

    others = [entry(f"{piece.strip()}{n}", -1.0 - n) for n in range(1, alternatives)]
    return {**entry(piece, PIECE_LOGPROB), "top_logprobs": [entry(piece, PIECE_LOGPROB), *others][:alternatives]}


def prompt_words(messages: list[dict[str, Any]]) -> int:
    return sum(len(content_text(m.get("content")).split()) for m in messages)


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    return next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")


def _structured(body: dict[str, Any], prompt: str) -> str | None:
    """The answer as JSON when `response_format` asks for it: an example of the schema, or an object."""
    response_format = body.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "json_schema" and isinstance(response_format, dict):
        return compact_json(example((response_format.get("json_schema") or {}).get("schema"), _subject(prompt)))
    if kind == "json_object":
        return arguments_json({"text": f"You said: {prompt}"})
    return None


def _format_schema(body: dict[str, Any]) -> Any:
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema")
    return None


def unanswerable(body: dict[str, Any]) -> str | None:
    """Why the model cannot answer under the request's response format schema (a keyword it cannot honour), or
    None: the server refuses such a request rather than answer outside the schema."""
    schema = _format_schema(body)
    return unhonoured(schema, _subject(_last_user_text(body["messages"]))) if schema is not None else None


def off_schema(body: dict[str, Any], plan: Plan, keywords: frozenset[str] | None = None) -> Plan:
    """The plan with its JSON text and its calls' arguments breaking the request's schemas (only their `keywords`,
    if given): what a server that accepts a schema and does not enforce it lets a model say."""
    subject = _subject(_last_user_text(body["messages"]))
    parameters = {tool["function"]["name"]: tool["function"].get("parameters") for tool in body.get("tools") or []}
    calls = tuple(replace(call, arguments=breaking(parameters.get(call.name), subject, keywords))
                  for call in plan.tool_calls)
    schema = _format_schema(body)
    text = compact_json(breaking(schema, subject, keywords)) if schema is not None and not calls else plan.text
    return replace(plan, text=text, tool_calls=calls)


def _answer(body: dict[str, Any]) -> Plan:
    messages = body["messages"]
    scripted = agent_turn(body)
    if scripted is not None:
        return scripted
    last = messages[-1]
    # A tool's result is answered in words, unless the request requires a tool call still (OpenAI's "required").
    if last["role"] == "tool" and not (body.get("tools") and body.get("tool_choice") == "required"):
        return Plan(f"The {_tool_name(messages, last)} tool returned: {content_text(last.get('content'))}")
    prompt = next((content_text(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    tools = body.get("tools") or []
    tool_choice = body.get("tool_choice") or "auto"
    if tools and tool_choice != "none":
        chosen = _mentioned(tools, prompt)
        if not chosen and tool_choice == "required":
            chosen = tools[:1]
        if body.get("parallel_tool_calls") is False:
            chosen = chosen[:1]
        if chosen:
            seed = request_seed(body)
            calls = tuple(
                ToolCall(f"{(seed + i) % 10**9:09d}", tool["function"]["name"],
                         schema_arguments(tool["function"].get("parameters"), prompt))
                for i, tool in enumerate(chosen)
            )
            return Plan("", calls, "tool_calls")
    if _REFUSE.search(prompt):
        return Plan("", refusal=REFUSAL)
    structured = _structured(body, prompt)
    return Plan(structured if structured is not None else f"{_sampled_opening(body)}You said: {prompt}")


# How a sampled answer opens, drawn by the request's `seed`: the same seed draws the same opening, as OpenAI's
# `seed` asks ("repeated requests with the same seed and parameters should return the same result"), and another
# seed most likely another. A request that does not sample (temperature 0) or gives no seed gets the plain answer.
SAMPLED_OPENINGS = ("", "Sure. ", "Well, ", "Right: ", "Here goes. ", "Gladly. ", "Of course. ", "Happily. ")


def _sampled_opening(body: dict[str, Any]) -> str:
    seed, temperature = body.get("seed"), body.get("temperature")
    if not isinstance(seed, int) or isinstance(seed, bool) or not isinstance(temperature, int | float) \
            or isinstance(temperature, bool) or temperature <= 0:
        return ""
    return SAMPLED_OPENINGS[seed % len(SAMPLED_OPENINGS)]


# A coding agent's task, as lmconform's agent cases phrase it, and the line of the file that answers it.
AGENT_TASK = re.compile(r"Read the file (\S+?)[.,;:]? and reply with the secret word it holds", re.IGNORECASE)
_SECRET_LINE = re.compile(r"secret word is\W+(\w+)", re.IGNORECASE)
# An agent's own tool for reading a file, by name; an agent with none has a shell to print it with.
READING_TOOLS = ("read", "read_file", "readfile", "view", "view_file")
SHELL_TOOLS = ("exec_command", "shell", "bash", "local_shell", "run_command")
_PATH_PROPERTY = re.compile(r"path|file", re.IGNORECASE)
_COMMAND_PROPERTY = re.compile(r"^(cmd|command)$", re.IGNORECASE)


def agent_turn(body: dict[str, Any]) -> Plan | None:
    """A coding agent's whole loop in two generations, for an agent asked what a file says: first one call of the
    agent's own file-reading tool (or of its shell, printing the file), then, once the tool's result is in the
    conversation, text that quotes the secret word the result holds. None when the conversation holds no such
    task, or the request offers no tool to read a file with."""
    messages = body["messages"]
    asked = next((position for position in range(len(messages) - 1, -1, -1) if messages[position]["role"] == "user"
                  and AGENT_TASK.search(content_text(messages[position].get("content")))), None)
    if asked is None:
        return None
    results = [message for message in messages[asked + 1:] if message["role"] == "tool"]
    if results:
        said = content_text(results[-1].get("content"))
        found = _SECRET_LINE.search(said)
        if found:
            return Plan(f'The secret word is "{found[1]}".')
        return Plan(f"The file did not give me the secret word; the tool said: {said[:200]}")
    task = AGENT_TASK.search(content_text(messages[asked].get("content")))
    assert task is not None  # `asked` is the message it was found in
    path = task[1]
    call = _reading_call(body.get("tools") or [], path)
    if call is None:
        return None
    name, arguments = call
    return Plan("", (ToolCall(f"{request_seed(body) % 10**9:09d}", name, arguments),), "tool_calls")


def _reading_call(tools: list[dict[str, Any]], path: str) -> tuple[str, dict[str, Any]] | None:
    """The call that shows the file at `path`: the reading tool with the path in its path-like property, or a shell
    tool running `cat`; every other required property gets an example of its schema, optional ones are left out."""
    functions = [tool["function"] for tool in tools if isinstance(tool.get("function"), dict)]
    for names, fits, value in ((READING_TOOLS, _PATH_PROPERTY.search, lambda schema: path),
                               (SHELL_TOOLS, _COMMAND_PROPERTY.match, lambda schema: ["cat", path] if isinstance(
                                   schema, dict) and schema.get("type") == "array" else f"cat {path}")):
        function = next((function for function in functions if str(function.get("name")).lower() in names), None)
        parameters = function.get("parameters") if function else None
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        if function is None or not isinstance(parameters, dict) or not isinstance(properties, dict):
            continue
        slot = next((name for name in properties if fits(name)), None)
        if slot is None:
            continue
        required = listed if isinstance(listed := parameters.get("required"), list) else []
        arguments = {name: example(properties[name], "") for name in required if name in properties}
        arguments[slot] = value(properties[slot])
        return function["name"], arguments
    return None


# A model refuses when it decides to; the scripted one when the prompt asks it to, so that a case can predict it.
_REFUSE = re.compile(r"\brefuse\b", re.IGNORECASE)
REFUSAL = "I can't help with that."


_REMEMBER = re.compile(r"remember (?:the word )?['\"]?(\w+)", re.IGNORECASE)


def recall(messages: list[dict[str, Any]]) -> Plan | None:
    """The answer to "what word did I ask you to remember?", from the user's earlier messages; None when the
    last message asks something else. Only a model that sees the whole conversation can answer it, which makes
    a server's memory of earlier turns observable."""
    last = messages[-1]
    question = content_text(last.get("content")).strip()
    if last["role"] != "user" or "remember" not in question.lower() or not question.endswith("?"):
        return None
    for message in reversed(messages[:-1]):
        found = _REMEMBER.search(content_text(message.get("content"))) if message["role"] == "user" else None
        if found:
            return Plan(f'You asked me to remember "{found[1]}".')
    return Plan("I don't know which word you mean.")


def usage(body: dict[str, Any], plan: Plan) -> dict[str, int]:
    """Token counts as whitespace-separated words: a stand-in that is stable and easy to recompute."""
    prompt = prompt_words(body["messages"])
    answer = [plan.text, plan.refusal or "", *(arguments_json(call.arguments) for call in plan.tool_calls)]
    completion = sum(len(part.split()) for part in answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


# One encoder for every frame: json.dumps with options builds a new encoder per call, a third of the cost of a
# 10,000-chunk stream.
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """Compact, with non-ASCII characters as they are, as JSON.stringify writes it."""
    return _COMPACT.encode(value)


def arguments_json(arguments: dict[str, Any]) -> str:
    return compact_json(arguments)


def _tool_name(messages: list[dict[str, Any]], result: dict[str, Any]) -> str:
    for message in messages:
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call.get("id") == result.get("tool_call_id"):
                name = (call.get("function") or {}).get("name")
                if isinstance(name, str) and name:
                    return name
    return "tool"


def _mentioned(tools: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    said = set(re.findall(r"[a-z0-9]+", prompt.lower()))
    return [tool for tool in tools if _name_words(tool["function"]["name"]) & said]


def _name_words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])", r"\1\3 \2\4", name)
    return {word.lower() for word in re.split(r"[\s_\-]+", spaced) if len(word) >= 4}


def schema_arguments(parameters: Any, prompt: str) -> dict[str, Any]:
    """An object holding every property of an object schema, each with an example value."""
    arguments = example(parameters, _subject(prompt)) if isinstance(parameters, dict) else None
    return arguments if isinstance(arguments, dict) else {}


def _subject(prompt: str) -> str:
    """The last capitalised word the user wrote: usually the thing asked about ("weather in Paris")."""
    words = [word.strip(string.punctuation) for word in prompt.split()]
    capitalised = [word for word in words if word[:1].isupper()]
    return capitalised[-1] if capitalised else "example"
