"""The chat faults that prove the schema checks: each changes one member of a chunk or of the non-stream body — its
JSON type, or whether it is there at all — so that the schema of that object fails at the level it grades the
member, and whatever else reads the member fails with it. Each API's faults module of this name does the same for
its own objects.

Each is named after what it breaks and was seen in a real server or one of its kind, as `seen_in` says.
"""

from __future__ import annotations

from typing import Any

from lmconform.apis.chat.reference import stages
from lmconform.reference.faults.edits import without, without_nulls
from lmconform.reference.faults.registry import fault

JsonObject = dict[str, Any]


@fault("created-not-integer", stages.OBJECT, api="chat",
       summary="`created` is a string of digits instead of an integer (stream and non-stream)",
       seen_in="servers that format the timestamp as text")
def created_not_integer(rendered: JsonObject) -> JsonObject:
    return {**rendered, "created": str(rendered["created"])}


@fault("usage-token-counts-strings", stages.OBJECT, api="chat",
       summary="the usage token counts are strings of digits (the usage chunk and the non-stream body)",
       seen_in="proxies that copy counts from text headers")
def usage_counts_strings(rendered: JsonObject) -> JsonObject:
    usage = rendered.get("usage")
    if not isinstance(usage, dict):
        return rendered
    return {**rendered, "usage": {key: str(value) if isinstance(value, int) else value for key, value in usage.items()}}


@fault("chunk-delta-missing", stages.OBJECT, api="chat",
       summary="the chunk that carries the finish reason has no `delta` in its choice (stream only)",
       seen_in="servers that send the finish reason in a bare choice")
def chunk_delta_missing(rendered: JsonObject) -> JsonObject:
    if rendered.get("object") != "chat.completion.chunk":
        return rendered
    choices = [without(choice, "delta") if choice.get("finish_reason") else choice for choice in rendered["choices"]]
    return {**rendered, "choices": choices}


@fault("chat-null-members-omitted", stages.OBJECT, api="chat",
       summary="members whose value is null are left out: a chunk's `finish_reason` and `logprobs`, the message's "
               "`refusal` (stream and non-stream)",
       seen_in="servers that serialise with exclude_none (llama.cpp omits `logprobs`)")
def chat_nulls_omitted(rendered: JsonObject) -> JsonObject:
    return without_nulls(rendered)






