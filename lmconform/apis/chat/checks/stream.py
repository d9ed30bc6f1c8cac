"""Chat completions streams, chunk by chunk: what the anchor suites assert of every chunk (llama.cpp's role and
envelope rules, vLLM's continuation deltas) and what LM Studio's and other servers' users saw break."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.chat.checks.answers import _entry_source, _tool_deltas
from lmconform.apis.chat.checks.scope import chat_streamed, chat_streamed_asking_usage, chat_streamed_with_tools
from lmconform.apis.chat.checks.views import require_stream
from lmconform.apis.chat.normalize import chunk_choices, first_delta
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    LLAMA_CPP_CHAT_TESTS,
    LMSTUDIO_CHANGELOG,
    LMSTUDIO_EMPTY_NAME,
    LMSTUDIO_WHOLE_ARGUMENTS,
    VLLM_USAGE_EVERY_CHUNK,
    ZED_LMSTUDIO_CLIENT,
)
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable

# Arguments at least this long are worth streaming in pieces: shorter ones may well fit one token.
INCREMENTAL_ARGUMENTS = 40


@check("chat.stream.role.once", level=Level.SHOULD, applies=chat_streamed, ref=LLAMA_CPP_CHAT_TESTS,
       title="only the first delta carries `role`", proven_by=("role-repeated",))
def role_once(observed: Observed) -> Iterator[Failure]:
    # SHOULD: llama.cpp's and vLLM's suites assert it; clients that concatenate every delta field read
    # "assistantassistant", the openai SDKs overwrite it and cope.
    chunks = [chunk for chunk in require_stream(observed).data_chunks() if chunk_choices(chunk)]
    for chunk in chunks[1:]:
        if "role" in first_delta(chunk):
            yield Failure("no role after the first delta", f"role {first_delta(chunk)['role']!r} again",
                          str(chunk.source))
            return


@check("chat.stream.chunk.required_fields", level=Level.MUST, applies=chat_streamed, ref=ZED_LMSTUDIO_CLIENT,
       title="every chunk carries `id`, `created` and `model`", proven_by=("chunk-created-missing",))
def required_fields(observed: Observed) -> Iterator[Failure]:
    # MUST: Zed's LM Studio client deserialises every chunk into a struct whose `created` and `model` are not
    # optional; a chunk without them ends the answer with an error.
    wanted = (("id", str), ("created", int), ("model", str))
    for chunk in require_stream(observed).data_chunks():
        wrong = [name for name, kind in wanted if not isinstance(chunk.payload.get(name), kind)
                 or isinstance(chunk.payload.get(name), bool)]
        if wrong:
            yield Failure("a string id, an integer created and a string model", f"without {', '.join(wrong)}",
                          str(chunk.source))
            return


@check("chat.stream.tool_call.continuation_name_absent", level=Level.MUST, applies=chat_streamed_with_tools,
       ref=LMSTUDIO_EMPTY_NAME, title="continuation tool-call deltas leave `function.name` out rather than send it "
                                      "empty", proven_by=("name-empty-continuation",))
def continuation_name_absent(observed: Observed) -> Iterator[Failure]:
    # MUST: gptel starts a new call on any present name, "" included, and rig read "" as a name; LM Studio 0.3.15
    # sent one on every continuation. A repeated full name is generation.tool_call.name_once's finding.
    for delta in _tool_deltas(observed):
        function = delta.entry.get("function") if isinstance(delta.entry, dict) else None
        if delta.starts_call or not isinstance(function, dict) or "name" not in function:
            continue
        if function["name"] in ("", None):
            yield Failure("no function.name on a continuation delta", f"name {function['name']!r}",
                          _entry_source(delta))
            return


@check("chat.stream.tool_call.arguments_incremental", level=Level.INFO, applies=chat_streamed_with_tools,
       ref=LMSTUDIO_WHOLE_ARGUMENTS, title="long tool-call arguments stream in more than one fragment",
       proven_by=("whole-call-one-chunk",))
def arguments_incremental(observed: Observed) -> Iterator[Failure]:
    # INFO: a whole call in one chunk is valid (Ollama always does it) and every client copes; it only means the
    # client shows nothing until the call is complete.
    require_stream(observed)
    for call in observed.require_tool_calls():
        if len(call.fragments) == 1 and len(call.arguments_text) >= INCREMENTAL_ARGUMENTS:
            yield Failure(f"arguments of {len(call.arguments_text)} characters in several fragments",
                          "all of them in one delta", str(call.fragments[0].source))


@check("chat.stream.usage.only_final", level=Level.SHOULD, applies=chat_streamed_asking_usage,
       ref=VLLM_USAGE_EVERY_CHUNK, title="`usage` comes once, in the last chunk", proven_by=("usage-every-chunk",))
def usage_only_final(observed: Observed) -> Iterator[Failure]:
    # SHOULD: clients that add up usage from every chunk count it many times over; those that keep the last cope.
    chunks = require_stream(observed).data_chunks()
    early = [chunk for chunk in chunks[:-1] if isinstance(chunk.payload.get("usage"), dict)]
    if early:
        yield Failure("usage on the last chunk only", f"usage on {len(early)} earlier chunks", str(early[0].source))


@check("chat.stream.error.openai_shape", level=Level.SHOULD, applies=chat_streamed, ref=LMSTUDIO_CHANGELOG,
       title='an error sent inside a stream is `{"error": {"message": …}}`', proven_by=("stream-error-bare-string",))
def error_openai_shape(observed: Observed) -> Iterator[Failure]:
    # SHOULD: the openai SDKs raise APIError with error.message, and Zed reads the message from the same place;
    # with a bare string they raise a generic "An error occurred during streaming". LM Studio's stream errors take
    # this form since 0.3.18 (its changelog), so --profile lmstudio@0.3.17 expects the older form.
    errors = require_stream(observed).error_events()
    if not errors:
        raise NotApplicable("no error event in the stream")
    observed.require_documented("stream_error_object")
    error = errors[0].payload["error"]
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        yield Failure('{"error": {"message": "…"}}', f'{{"error": {json.dumps(error)[:100]}}}', str(errors[0].source))
