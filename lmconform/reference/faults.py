"""The fault catalogue: each fault reproduces one real-world defect, and changes nothing else.

A check proves itself against the catalogue: it passes on the clean server and fails on exactly the faults
about its defect. That only works if a fault is narrow, so each one names a single deviation from what LM
Studio sends, and says whether it shows in the streamed body, the non-stream body, or both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    """One defect. `api` is what it breaks: "chat" (chat completion content), "responses" (the Responses API:
    its validation, its stored conversations and its event stream), "models" (the model list) or "http" (status,
    content type, SSE framing or timing of the response rather than the JSON it carries)."""

    name: str
    api: str
    summary: str
    seen_in: str


_CATALOGUE = (
    Fault("tool-index-missing", "chat", "streamed tool_calls entries carry no `index` key (stream only)",
          "ollama#7881, openai-python PR#3246"),
    Fault("tool-index-one", "chat", "streamed tool call indexes start at 1 instead of 0 (stream only)",
          "Void parser; LocalAI#9722"),
    Fault("arguments-object", "chat",
          "`arguments` is a JSON object, not a string: whole in the first tool delta, or in the message "
          "(stream and non-stream)",
          "llama.cpp#20198, litellm PR#37792"),
    Fault("id-name-repeated", "chat", "every tool call delta repeats `id`, `type` and `function.name` (stream only)",
          "SillyTavern PR#5948; llama-cpp-python's server"),
    Fault("arguments-invalid-json", "chat",
          "the arguments string loses its first `{`, so it is not JSON (stream and non-stream)",
          "llama.cpp#22722"),
    Fault("arguments-cumulative", "chat", "each arguments delta re-sends all arguments so far (stream only)",
          "litellm issues"),
    Fault("two-calls-one-index", "chat",
          "parallel tool calls are all streamed at index 0, each with its own id and name (stream only)",
          "litellm PR#37792"),
    Fault("type-null-continuation", "chat", 'continuation tool call deltas carry `"type": null` (stream only)',
          "seen on a Python LLM stack"),
    Fault("empty-response", "chat",
          "no text, no reasoning, no tool call: only the role and a `stop` finish (stream and non-stream)",
          'Void ("Response from model was empty")'),
    Fault("json-instead-of-sse", "http",
          "a request with tools and `stream: true` is answered with the non-stream JSON body", "sglang#2810"),
    Fault("no-done", "chat", "the stream ends without `data: [DONE]` (stream only)", "several Python stacks"),
    Fault("finish-stop-after-tools", "chat",
          '`finish_reason` is "stop" after tool calls (stream and non-stream)', "vllm PR#9209, litellm#35663"),
    Fault("chunk-not-json", "chat",
          "after the first chunk, one extra data line that is not JSON: `data: processing...` (stream only)",
          "proxies that inject text"),
    Fault("server-error-on-bad-input", "http",
          "a request that deserves a 400 validation error gets HTTP 500 text/plain instead",
          "llama-cpp-python's server"),
    Fault("models-missing", "models", "`GET /v1/models` answers 404 text/plain", "mock servers"),
    Fault("data-after-done", "chat", "one more chunk event follows `data: [DONE]` (stream only)",
          "hand-written SSE encoders"),
    Fault("invalid-utf8", "http",
          "after the first event, an SSE comment line with invalid UTF-8 bytes; the JSON is untouched (stream only)",
          "byte-level proxies that inject keep-alive comments"),
    Fault("body-too-large", "http",
          "1 GiB of SSE comment padding precedes the real chunks (stream only)",
          "runaway generations and misbehaving proxies"),
    Fault("stall", "http",
          "after the first chunk the stream goes silent with the connection held open, up to 10 minutes "
          "(stream only)",
          "hung model processes behind a live connection"),
    Fault("tool-id-missing", "chat", "a tool call has no `id`: first delta or message (stream and non-stream)",
          "servers that stream OpenAI-style calls without ids"),
    Fault("finish-reason-missing", "chat",
          "`finish_reason` is never set: null in the finish chunk and the message choice (stream and non-stream)",
          "servers that end a stream without a finish reason"),
    Fault("role-missing", "chat", "the first chunk's delta has no `role` (stream only)",
          "servers that never send the role delta"),
    Fault("chunk-id-changes", "chat", "each chunk carries a different `id` (stream only)",
          "servers that mint an id per chunk"),
    Fault("object-not-chunk", "chat", 'stream chunks say `"object": "chat.completion"` (stream only)',
          "servers that reuse the non-stream object type"),
    Fault("usage-chunk-unrequested", "chat",
          "the `choices: []` usage chunk is sent without `stream_options.include_usage` (stream only)",
          "foundry-local#905 (what it breaks)"),
    Fault("usage-ignored", "chat", "`stream_options.include_usage: true` is ignored: no usage chunk (stream only)",
          "servers that do not implement stream_options"),
    Fault("tool-choice-ignored", "chat",
          "`tool_choice` is neither validated nor honoured; every value behaves as auto (stream and non-stream)",
          "several local servers"),
    Fault("tool-calls-interleaved", "chat",
          "parallel tool calls stream their deltas in turns, a delta of each call in rotation (stream only)",
          "no public report; LM Studio's generator API requires one call at a time"),
    Fault("nested-tools-accepted", "responses",
          "Responses tools in the chat form `{type, function: {...}}` are accepted without error, then dropped: "
          "neither the model nor the echoed `tools` has them",
          "servers that ignore the tool keys they do not know"),
    Fault("flattened-tools-rejected", "responses",
          'flattened Responses tools are rejected as if nested: 400 "Required" at `tools.<i>.function`',
          "servers that validate Responses tools with the chat schema"),
    Fault("chain-ignored", "responses",
          "`previous_response_id` is checked and echoed, but the model and the token count see only this "
          "request's input",
          "stateless servers that accept the field"),
    Fault("unknown-previous-200", "responses",
          "an unknown `previous_response_id` is answered 200 as a fresh conversation (the id is still echoed)",
          "servers that treat a missing chain as none"),
    Fault("unknown-previous-404", "responses",
          "an unknown `previous_response_id` gets HTTP 404 with the `previous_response_not_found` body",
          "servers that answer a missing chain as a missing resource"),
    Fault("previous-id-echo-wrong", "responses",
          "the response's `previous_response_id` is null even when one was given; the chain still works "
          "(stream and non-stream)",
          "servers that do not echo the field"),
    Fault("fork-shares-state", "responses",
          "history is kept per chain root, not per response: a reply to P continues from the chain's newest "
          "turn, so it sees the turns of P's earlier children too (one mutable thread)",
          "servers that keep one mutable thread per conversation"),
    Fault("function-call-output-rejected", "responses",
          "`function_call_output` input items get a 400 error at `input`",
          "servers without tool results in the Responses API"),
    Fault("call-id-missing", "responses", "`function_call` output items have no `call_id` (stream and non-stream)",
          "servers that map chat tool calls to Responses items by hand"),
    Fault("events-out-of-order", "responses",
          "the first delta of the first output item comes before its `response.output_item.added` (stream only)",
          "hand-written Responses encoders"),
    Fault("no-response-completed", "responses", "the stream ends without `response.completed` (stream only)",
          "servers that end the stream at the last item"),
    Fault("arguments-done-mismatch", "responses",
          "`response.function_call_arguments.done` and the finished item carry one more key than the concatenated "
          "deltas (stream only)",
          "servers that re-serialise the parsed arguments at the end"),
    Fault("arguments-done-missing", "responses",
          "function calls stream their argument deltas but no `response.function_call_arguments.done` (stream only)",
          "llama.cpp's llama-server"),
    Fault("duplicate-output-index", "responses",
          "the second output item reuses `output_index` 0; with a single item nothing changes (stream only)",
          "servers that number content, not items (openai-python rejects it)"),
    Fault("sequence-not-increasing", "responses",
          "the third event repeats the `sequence_number` of the second (stream only)",
          "servers that number events per item"),
    Fault("sequence-number-missing", "responses", "events carry no `sequence_number` (stream only)",
          "llama.cpp's server"),
    Fault("event-field-mismatch", "responses",
          "the SSE `event:` line of every delta event says `message` instead of the data's `type` (stream only)",
          "generic SSE encoders with a fixed event name"),
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _CATALOGUE}


def parse_faults(names: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(names)
    for name in sorted(chosen):
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULTS)}")
    return chosen
