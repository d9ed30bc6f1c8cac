"""Faults of a Responses stream's life before its answer: a long prompt's prefill kept alive with SSE comment lines
only, which Codex's stream idle timeout does not count (openai/codex #31539)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterable

from lmconform.reference.faults.registry import flag

# The prefill the fault plays, and how often it sends a comment meanwhile: long enough to pass the idle limit the
# catalogue's runs and the tests hold streams to (a few seconds, tools/catalogue.py), short enough to keep them quick.
# Against Codex's own limit (300 s) it is a prefill that lasts past it.
PREFILL_S = 4.0
COMMENT_EVERY_S = 0.5

PREFILL_COMMENT_KEEPALIVES = flag(
    "prefill-comment-keepalives", api="responses",
    summary=f"on a long prompt, the stream sends only SSE comment lines (`: keep-alive`) for {PREFILL_S:g} s before "
            "its first event, as during a long prefill (stream only)",
    seen_in="llama.cpp's llama-server before PR #25241 (openai/codex #31539: Codex reconnects and sends the whole "
            "prompt again)")


async def after_comment_keepalives(frames: Iterable[bytes], stopping: threading.Event) -> AsyncIterator[bytes]:
    """`frames`, after PREFILL_S seconds of comment lines alone (sooner when the server stops)."""
    deadline = time.monotonic() + PREFILL_S
    while not stopping.is_set() and time.monotonic() < deadline:
        yield b": keep-alive\n\n"
        await asyncio.sleep(min(COMMENT_EVERY_S, max(deadline - time.monotonic(), 0)))
    for frame in frames:
        yield frame
