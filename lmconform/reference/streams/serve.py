"""How a request asks for a generated form, and how the writes of one are sent.

A form is named in the path (`/streams/FORM/v1/...`) or anywhere in the request body as `lmconform-stream=FORM`,
usually in the prompt: every proxy forwards the prompt, so the same request reaches the reference server with its
form whatever is in between. A form renders the clean answer; with a fault active it is not used.

The generated answers also reason when the prompt asks the model to think (the word `think`): asking in the
prompt is the one way every proxy forwards (LiteLLM refuses `reasoning_effort` for a model it does not know).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from lmconform.reference.model import content_text
from lmconform.reference.raw import DRIP_PAUSE_S, GZIP_HEADERS, Framing, RawAnswer, accepts_gzip, dripped, gzipped
from lmconform.reference.streams.form import Form, parse_form
from lmconform.reference.streams.render import Rendered
from lmconform.reference.streams.writes import WRITE_FEATURES, Write

TAG = "lmconform-stream="
_TAG = re.compile(re.escape(TAG) + r"(\d{1,18}(?::[a-z0-9,-]+)?)")
_THINK = re.compile(r"\bthink\b", re.IGNORECASE)
FORM_HEADER = "X-Lmconform-Stream"
FORM_DRIP_BYTES = 3  # a generated form drips fewer bytes than the drip variant: hundreds of examples are played
SHOWS_HEADER = "X-Lmconform-Stream-Shows"
TROUBLES_HEADER = "X-Lmconform-Stream-Troubles"  # the clients known to read this form wrongly
# Long enough for a reader in another process to take a write as a segment of its own, short enough that a
# stream of a few hundred such writes takes a second or so.
DEFAULT_PAUSE_S = 0.003


def requested_form(request: Request, body: Any, faults: frozenset[str]) -> Form | None:
    """The form the path or the (parsed) body names; None for the plain server. A form that names an unknown
    feature is a ValueError, for a 400 answer."""
    if faults:
        return None
    named = getattr(request.state, "stream_form", None)
    if named is not None:
        return named
    found = _TAG.search(json.dumps(body))
    return parse_form(found[1]) if found else None


_TAG_IN_TEXT = re.compile(r"\s*" + re.escape(TAG) + r"\S*")


def untagged(value: Any) -> Any:
    """The request as the model reads it: the form's name taken out of every text, so that every form of a
    request answers with the same generation."""
    if isinstance(value, str):
        return _TAG_IN_TEXT.sub("", value)
    if isinstance(value, list):
        return [untagged(item) for item in value]
    if isinstance(value, dict):
        return {key: untagged(item) for key, item in value.items()}
    return value


def last_user_text(messages: list[dict[str, Any]]) -> str:
    return next((content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")


def thought(prompt: str) -> str | None:
    """The reasoning of a generated answer: there when the prompt asks the model to think."""
    return f"Thinking about: {prompt}" if _THINK.search(prompt) else None


def streamed(rendered: Rendered, headers: Mapping[str, str], request: Request) -> Response:
    """The writes, each a body message of its own; a pause after those a reader must get apart; then what the
    form's features of the transport do to them (lmconform.reference.raw). Headers say the form by the features that
    changed something (the same bytes again, but for ids and times), what they did, and which clients read it
    wrongly; ASCII, as HTTP wants."""
    if "gzip" in rendered.effective and not accepts_gzip(request):  # never sent to a client that did not ask
        rendered = rendered.without({"gzip"})
    state = request.app.state
    pause = getattr(state, "stream_pause", DEFAULT_PAUSE_S)
    if "close-delimited" in rendered.effective and not pause:
        # A chunked body keeps each write apart whatever the timing; a close-delimited one has no chunks, and
        # without the pauses where its writes end depends on when the reader reads. A form must take effect alike
        # on every play (a finding shrinks by playing it again), so this one is one write and says so.
        rendered = replace(rendered.without(WRITE_FEATURES | {"drip"}), writes=(Write(rendered.body),))
    shown = {FORM_HEADER: str(Form(rendered.form.seed, rendered.effective)), SHOWS_HEADER: rendered.cause.encode("ascii", "replace").decode(),
             TROUBLES_HEADER: ",".join(sorted({trouble.client for trouble in rendered.troubles}))}
    body: AsyncIterator[bytes] = _sent(rendered.writes, pause, state.stopping)
    on = rendered.effective
    if "drip" in on:
        # A server told not to pause has readers that take each chunk apart whatever the timing: its drip need not
        # wait either (the stream fuzz plays hundreds of forms, and 0.3 s of each dripped one was waiting).
        body = dripped(body, FORM_DRIP_BYTES, DRIP_PAUSE_S if pause else 0.0)
    gzip = "gzip" in on
    if gzip:
        body = gzipped(body)
    answer = StreamingResponse(body, headers={**headers, **shown, **(GZIP_HEADERS if gzip else {})})
    return RawAnswer(answer, Framing.CLOSE_DELIMITED) if "close-delimited" in on else answer


async def _sent(writes: tuple[Write, ...], pause: float, stopping: threading.Event) -> AsyncIterator[bytes]:
    for write in writes:
        if stopping.is_set():
            return
        yield write.data
        if write.pause and pause:
            await asyncio.sleep(pause)
