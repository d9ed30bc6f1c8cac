"""What every door of the reference server shares on the wire: the model it answers as, the headers of an event
stream, how a streamed call's arguments are cut, and the JSON its readers refuse."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

DEFAULT_MODEL = "lmconform-reference"
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
FRAGMENT_CHARS = 8  # characters of arguments per streamed delta


def reject_json_constant(name: str) -> Any:
    """NaN and Infinity are not JSON; LM Studio's JSON.parse refuses them, and so must the reference."""
    raise ValueError(f"{name} is not JSON")


def unknown_route(method: str, path: str, lmstudio_words: bool) -> JSONResponse:
    """The answer to a route the server does not offer: a 404, or LM Studio's 200 with its words."""
    message = f"Unexpected endpoint or method. ({method} {path})"
    if lmstudio_words:
        return JSONResponse({"error": message})
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "param": None,
                                   "code": "not_found"}}, 404)
