"""Chat completions answers as a whole, streamed or not: the message's tool calls, its finish reason against what
happened, what the request asked for (parallel calls, a JSON format, an output cap) and which
field reasoning came in."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.chat.checks.scope import chat_answer, chat_json_object, chat_parallel_calls_off, chat_with_tools
from lmconform.apis.chat.checks.views import chat_stream
from lmconform.apis.chat.normalize import REASONING_FIELDS, first_delta
from lmconform.checks.observed import Observed, output_cap
from lmconform.checks.refs import (
    LLAMA_CPP_CHAT_TESTS,
    LLAMA_CPP_TOOL_TESTS,
    LMSTUDIO_EMPTY_TOOL_CALLS,
    LMSTUDIO_EMPTY_TOOL_ID,
    LMSTUDIO_JSON_OBJECT,
    LMSTUDIO_REASONING_SWALLOWED,
    LOCALAI_FINISH_WITHOUT_CALL,
    VLLM_REASONING_OUTPUTS,
)
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, Note


def _message(observed: Observed) -> dict:
    """The non-stream answer's first message; a stream has none."""
    body = observed.exchange.json
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    return message if isinstance(message, dict) else {}


@check("chat.message.tool_calls_absent_when_empty", level=Level.MUST, applies=chat_answer,
       ref=LMSTUDIO_EMPTY_TOOL_CALLS, title="`tool_calls` is left out when there is no call, never `[]`",
       proven_by=("tool-calls-empty-list",))
def tool_calls_absent_when_empty(observed: Observed) -> Iterator[Failure]:
    # MUST: opencode (@ai-sdk/openai-compatible) waits forever for the calls an empty list announces; LM Studio
    # 0.3.35 sent one in every body.
    observed.require_success()
    if observed.exchange.is_event_stream:
        for chunk in chat_stream(observed).data_chunks():
            if first_delta(chunk).get("tool_calls") == []:
                yield Failure("no tool_calls key in a delta without calls", '"tool_calls": []', str(chunk.source))
                return
    elif _message(observed).get("tool_calls") == []:
        yield Failure("no tool_calls key in a message without calls", '"tool_calls": []',
                      observed.exchange.body_excerpt(300))


@check("chat.message.tool_call.id_nonempty", level=Level.MUST, applies=chat_with_tools, ref=LMSTUDIO_EMPTY_TOOL_ID,
       title="every tool call of a message has a non-empty `id`", proven_by=("tool-id-missing",))
def tool_call_id_nonempty(observed: Observed) -> Iterator[Failure]:
    # MUST: the client echoes the id in its tool message; with "" LM Studio itself refused the next turn (Crush).
    # Streamed calls are chat.stream.tool_call.starts_with_id_and_name's.
    observed.require_success()
    if observed.exchange.is_event_stream:
        raise NotApplicable("a streamed answer: chat.stream.tool_call.starts_with_id_and_name judges its ids")
    for position, call in enumerate(_message(observed).get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            shown = call.get("id", "no id") if isinstance(call, dict) else call
            yield Failure("a non-empty string id", f"tool_calls[{position}]: {shown!r}", json.dumps(call)[:300])


@check("chat.finish_reason.tool_calls_only_with_calls", level=Level.MUST, applies=chat_answer,
       ref=LOCALAI_FINISH_WITHOUT_CALL, title='`finish_reason` is "tool_calls" only when the answer calls a tool',
       proven_by=("finish-tool-calls-without-call",))
def tool_calls_only_with_calls(observed: Observed) -> Iterator[Failure]:
    # MUST: agent loops run the calls a "tool_calls" finish announces; with none, mastra's loop spun to its limit.
    observed.require_success()
    end = observed.generation.end
    if end is not None and end.finish_reason == "tool_calls" and not observed.generation.tool_calls():
        yield Failure("a tool call, or another finish_reason", 'finish_reason "tool_calls" without any call',
                      str(end.source))


@check("chat.finish_reason.length_at_max_tokens", level=Level.SHOULD, applies=chat_answer, ref=LLAMA_CPP_CHAT_TESTS,
       title='an answer that used up `max_tokens` says `finish_reason: "length"`',
       proven_by=("finish-stop-at-max-tokens",))
def length_at_max_tokens(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients tell a cut answer from a finished one by it (the openai SDK's stream helper raises on it);
    # measured with the server's own count, so a short answer is never judged.
    observed.require_success()
    cap = output_cap(observed.request_body, "max_completion_tokens") or output_cap(observed.request_body, "max_tokens")
    end = observed.generation.end
    usage = end.usage if end is not None and isinstance(end.usage, dict) else {}
    used = usage.get("completion_tokens")
    if end is None or cap is None or not isinstance(used, int) or used < cap:
        raise NotApplicable("the answer did not reach the request's max_tokens")
    if end.finish_reason is None:
        raise NotApplicable("no finish_reason at all: chat.stream.finish_reason.exactly_once reports it")
    if end.finish_reason != "length":
        yield Failure(f'finish_reason "length" ({used} of {cap} tokens used)', f"finish_reason {end.finish_reason!r}",
                      str(end.source))


@check("chat.parallel_tool_calls.false_means_one", level=Level.SHOULD, applies=chat_parallel_calls_off,
       ref=LLAMA_CPP_TOOL_TESTS, title="`parallel_tool_calls: false` is answered with at most one tool call",
       proven_by=("parallel-calls-ignored",))
def false_means_one(observed: Observed) -> Iterator[Failure]:
    # SHOULD: llama.cpp's and vLLM's suites assert it; a client that runs calls one at a time copes with more.
    observed.require_success()
    calls = observed.generation.tool_calls()
    if len(calls) > 1:
        yield Failure("one tool call", f"{len(calls)} calls: {[call.name for call in calls]}",
                      str(calls[1].started.source))


@check("chat.response_format.json_object_accepted", level=Level.SHOULD, applies=chat_json_object,
       ref=LMSTUDIO_JSON_OBJECT, title='`response_format: {"type": "json_object"}` is accepted',
       proven_by=("json-object-rejected",))
def json_object_accepted(observed: Observed) -> Iterator[Failure]:
    # SHOULD: JSON mode is in the OpenAI spec and n8n, LangChain and Open Notebook send it; a server that only
    # offers json_schema says so with a 4xx, and the client can fall back. LM Studio documents json_schema only,
    # so with --profile lmstudio the refusal is UNSUPPORTED.
    status = observed.exchange.status or 0
    if 400 <= status < 500:
        observed.require_documented("response_format_json_object")
        yield Failure("HTTP 2xx: JSON mode honoured", f"HTTP {status}", observed.exchange.body_excerpt())


def _reasoning_holders(observed: Observed) -> list[dict]:
    """Each delta of a stream, or the message of a body: what may carry reasoning."""
    if observed.exchange.is_event_stream:
        return [first_delta(chunk) for chunk in chat_stream(observed).data_chunks()]
    return [_message(observed)]


# Who reads which name, as their public sources say. The openai SDKs keep an unknown member as sent (Python's models
# allow extra fields, Node's are the parsed JSON), so it is the application that picks a name.
_READERS = {
    "reasoning": "vLLM's name since it renamed `reasoning_content` (its docs warn that clients reading the old "
                 "name silently read nothing), LM Studio's for gpt-oss: a client that reads only "
                 "`reasoning_content` shows none of it",
    "reasoning_content": "DeepSeek's name, vLLM's before its rename and llama-server's (`reasoning_format`): a "
                         "client that reads only `reasoning` shows none of it",
}


@check("chat.reasoning.separate_field", level=Level.INFO, applies=chat_answer, ref=VLLM_REASONING_OUTPUTS,
       title="reasoning comes in one field of its own, `reasoning` or `reasoning_content`, named in the verdict",
       proven_by=("reasoning-fields-mixed",))
def separate_field(observed: Observed) -> Iterator[Failure | Note]:
    # INFO: which name is the server's choice and clients read one or the other (the verdict says which); an
    # answer that switches names part way loses part of its reasoning in every client. Reasoning left in the text
    # is generation.reasoning.text_has_no_think_tags's.
    observed.require_success()
    used = [{name for name in REASONING_FIELDS if isinstance(holder.get(name), str) and holder[name]}
            for holder in _reasoning_holders(observed)]
    names = sorted(set().union(*used))
    for name in names:
        yield Note(f"reasoning in `{name}`: {_READERS[name]}")
    alone = {name: sum(1 for found in used if found == {name}) for name in names}
    if len(names) > 1 and all(alone.values()):
        yield Failure("one name for the whole answer's reasoning",
                      ", ".join(f"{count} part(s) in `{name}` only" for name, count in alone.items()) +
                      ": a client that reads one name loses the rest", observed.exchange.body_excerpt(300))


@check("chat.reasoning.answer_not_swallowed", level=Level.SHOULD, applies=chat_answer,
       ref=LMSTUDIO_REASONING_SWALLOWED, title="a finished answer with reasoning also has content or a tool call",
       proven_by=("content-as-reasoning",))
def answer_not_swallowed(observed: Observed) -> Iterator[Failure]:
    # SHOULD: LM Studio 0.3.9 beta 3 sent every token of DeepSeek R1 as reasoning; clients that hide reasoning
    # showed nothing. A model may think and stop (rarely), so clients cope; an answer cut by max_tokens is exempt.
    observed.require_success()
    generation = observed.generation
    end = generation.end
    if not generation.text("reasoning") or end is None or end.finish_reason != "stop":
        raise NotApplicable("no reasoning, or the answer did not finish normally")
    if not generation.text().strip() and not generation.tool_calls():
        yield Failure("content after the reasoning", "reasoning only: the answer went into the reasoning field",
                      observed.exchange.body_excerpt(300))
