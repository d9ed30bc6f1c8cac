"""What every door of the reference server shares on the wire: the model it answers as, the headers of an event
stream, how a streamed call's arguments are cut, and the JSON its readers refuse."""

from __future__ import annotations

from typing import Any

DEFAULT_MODEL = "lmconform-reference"
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
FRAGMENT_CHARS = 8  # characters of arguments per streamed delta


def reject_json_constant(name: str) -> Any:
    """NaN and Infinity are not JSON; LM Studio's JSON.parse refuses them, and so must the reference."""
    raise ValueError(f"{name} is not JSON")
