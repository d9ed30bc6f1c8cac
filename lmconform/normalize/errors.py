"""Error bodies, whatever the API: OpenAI's `{"error": {"message", "type", "param", "code"}}`, Anthropic's
`{"type": "error", "error": {"type", "message"}}`, LM Studio's bare `{"error": "<message>"}` on chat completions,
and the `{"detail": …}` of Python web frameworks; and the same said in words, for a reader."""

from __future__ import annotations

import json
from typing import Any

from lmconform.wire.http import HttpExchange

WORDS_CHARS = 400  # an error message past this is cut: a stack trace says nothing more to a reader


def error_object(exchange: HttpExchange) -> dict:
    """The `error` object of a JSON body; `{}` when the body has none (or only LM Studio's bare string)."""
    body = exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def error_words(body: Any) -> str | None:
    """What an error body says, in words: its message whole, then where (`param`) and what (`code`, `type`) —
    `Invalid discriminator value. Expected 'function' (at tools.4.type; invalid_union_discriminator)`. `body` is the
    parsed JSON, or text that may hold it (an agent shows a server's error body as it came); None when it is no
    error body a client would recognise."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, str) and error.strip():
        return _cut(error)
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        where = [f"at {error['param']}"] if isinstance(error.get("param"), str) and error["param"] else []
        what = [str(error[key]) for key in ("code", "type") if isinstance(error.get(key), str | int) and error[key]]
        said = "; ".join([*where, *what[:1]])
        return _cut(error["message"]) + (f" ({said})" if said else "")
    detail = body.get("detail")
    if isinstance(detail, str) and detail.strip():
        return _cut(detail)
    return None


def refusal_words(exchange: HttpExchange) -> str:
    """A refused request's answer as a reader wants it: `HTTP 400: <the error body in words>`, else the body's
    beginning."""
    said = error_words(exchange.json)
    return f"HTTP {exchange.status}: {said}" if said else f"HTTP {exchange.status}: {exchange.body_excerpt(300)}"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WORDS_CHARS else text[:WORDS_CHARS - 1] + "…"
