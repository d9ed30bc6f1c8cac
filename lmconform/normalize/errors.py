"""Error bodies, whatever the API: OpenAI's `{"error": {"message", "type", "param", "code"}}`, or LM Studio's bare
`{"error": "<message>"}` on chat completions."""

from __future__ import annotations

from lmconform.wire.http import HttpExchange


def error_object(exchange: HttpExchange) -> dict:
    """The `error` object of a JSON body; `{}` when the body has none (or only LM Studio's bare string)."""
    body = exchange.json
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}
