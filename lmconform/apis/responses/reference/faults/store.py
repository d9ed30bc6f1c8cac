"""The faults of what a server stores of a response: what `store`, `GET` and `DELETE /v1/responses/{id}` and its
input items promise (OpenAI's Responses API reference), each a flag the door asks about where it stores, reads or
deletes."""

from lmconform.reference.faults.registry import flag

STORE_FALSE_IGNORED = flag(
    "store-false-ignored", api="responses",
    summary="a response created with `store: false` is stored all the same: GET returns it and "
            "`previous_response_id` continues from it",
    seen_in="servers that keep every response and read `store` nowhere")

DELETE_KEEPS_RESPONSE = flag(
    "delete-keeps-response", api="responses",
    summary="DELETE /v1/responses/{id} answers `deleted: true` but the response stays: GET still returns it and "
            "chains still continue from it",
    seen_in="servers whose DELETE only acknowledges")

DELETION_BARE = flag(
    "deletion-bare", api="responses",
    summary="DELETE /v1/responses/{id} deletes, but answers 200 with `{}` instead of the deletion object",
    seen_in="servers that answer a DELETE with an empty object")

INPUT_ITEMS_EMPTY = flag(
    "input-items-empty", api="responses",
    summary="GET /v1/responses/{id}/input_items answers a list without the response's input items",
    seen_in="servers that keep the output of a response and not its input")

STREAM_STORED_AS_CREATED = flag(
    "stream-stored-as-created", api="responses",
    summary="a streamed response is stored as its `response.created` snapshot: GET answers it `in_progress`, "
            "without output",
    seen_in="servers that store a streamed response when its stream starts")
