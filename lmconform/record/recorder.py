"""`lmconform record`: keep what real clients send as case files.

A recording endpoint on a loopback port answers every request as the embedded reference server does (or passes
it to a loopback upstream) and writes the request as `<cases>/<api>/recorded-<client>-<endpoint>-<n>.json`, so
that a case's shape is what a released SDK sends rather than what someone remembers it sending.

What is kept of a request, and why:

- the body without `model`: the suite fills in the target's model;
- the headers as provenance only (the runner sends its own): credentials as `[Filtered]`, transport headers and
  the ones that differ from machine to machine or from try to try left out;
- every credential the request carried, wherever else it appears (a key echoed into a body), as `[Filtered]`;
- nothing of the machine or the user that recorded it (folders, user and host names, OS version, session and device
  ids: lmconform.record.scrub), each replaced by a placeholder of its kind.

A chained Responses turn names a response id that only the server that issued it knows, so it cannot be
replayed as sent. It becomes the turns of the first turn's case, chained to the target's own answer when the case
is played: the recorded input with lmconform's control, sibling and repeated turns around it (a chain probe,
lmconform.cases.chain_probe), or the answer to the first turn's function call. A turn chained to an id this
recorder never saw is kept only when it was refused, with a marker in place of the id: it is then the
unknown-previous case. Any other chained turn (a third turn, a second child of one response) is answered but not
kept, and the recorder says so.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lmconform.api_table import APIS
from lmconform.cases import Turn, call_answer, cases_folder, chain_probe
from lmconform.cases.writer import create, descriptions_in, next_index
from lmconform.files import write_json_atomically
from lmconform.record.kept import (
    ENDPOINTS,
    LABEL_HEADER,
    NOT_JSON,
    UNKNOWN_PREVIOUS_MARKER,
    Answer,
    Captured,
    client_identity,
    credentials,
    description,
    error_message,
    kept_headers,
    parsed_json,
    redacted,
    response_id_of,
    slug,
)
from lmconform.record.scrub import Scrubber
from lmconform.reference.store import MAX_BODY_BYTES


class Recorder:
    """The recording endpoint as an ASGI app: each request is answered by `answerer` and then written.

    Requests are handled one at a time: a client's next turn often follows the moment the last byte of the
    previous answer arrives, and its case must be written by then for a chained turn to find the turn it continues.
    Files are numbered in arrival order for the same reason.
    """

    def __init__(self, folder: Path, answerer: ASGIApp, client: str | None = None, answered_by: str = "",
                 report: Callable[[str], None] | None = None, stem: str | None = None) -> None:
        """`stem`: the files' names, `<stem>-<n>.json`, instead of `recorded-<client>-<endpoint>-<n>.json`."""
        self.folder = folder
        self.answerer = answerer
        self.client = client
        self.stem = stem
        self.scrubber = Scrubber()  # one for the recording: an id keeps its placeholder across its cases
        self.answered_by = answered_by
        self.report = report or (lambda line: print(line, file=sys.stderr, flush=True))
        self.written: list[Path] = []
        # Response id -> the first-turn case it answered, while that case can still take further turns; None for a
        # response this recorder saw that cannot be continued in a case (a further turn itself, or not kept).
        self._turns: dict[str, Path | None] = {}
        self._lock = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = bytearray()
        async for piece in request.stream():
            body += piece
            if len(body) > MAX_BODY_BYTES:
                self.report(f"not kept: {request.method} {request.url.path}: a body over {MAX_BODY_BYTES} bytes")
                await JSONResponse({"error": f"Request body is larger than {MAX_BODY_BYTES} bytes."}, 413)(
                    scope, receive, send)
                return
        headers = {name.lower(): value for name, value in request.headers.items()}
        query = scope.get("query_string", b"").decode("latin-1")
        captured = Captured(request.method, request.url.path + (f"?{query}" if query else ""), headers,
                             bytes(body), headers.get(LABEL_HEADER))
        answer = Answer()
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        async def tee(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer.status = message["status"]
                content_type = dict(message.get("headers") or []).get(b"content-type", b"")
                answer.content_type = content_type.decode("latin-1").lower()
            elif message["type"] == "http.response.body":
                if len(answer.body) <= MAX_BODY_BYTES:
                    answer.body += message.get("body", b"")
                if not message.get("more_body", False):
                    self._keep(captured, answer)  # before the last byte, so the client's next turn finds it
            await send(message)

        async with self._lock:
            await self.answerer(dict(scope), replay, tee)

    def _keep(self, captured: Captured, answer: Answer) -> None:
        try:
            self._record(captured, answer)
        except OSError as error:
            self.report(f"not kept: {captured.method} {captured.path}: {error}")

    def _record(self, captured: Captured, answer: Answer) -> None:
        where = f"{captured.method} {captured.path}"
        endpoint = ENDPOINTS.get((captured.method, captured.path.split("?", 1)[0]))
        if endpoint is None:
            self.report(f"not kept: {where}: the suite has no cases for this endpoint")
            return
        status = answer.status or 0
        if not (200 <= status < 300 or 400 <= status < 500):
            self.report(f"not kept: {where}: answered HTTP {status}, neither a success nor a client error")
            return
        api, endpoint_slug = endpoint
        body = parsed_json(captured.body) if captured.body else None
        chain = APIS[api].recorded_chain
        previous = body.get(chain) if chain and isinstance(body, dict) else None
        if isinstance(previous, str) and isinstance(body, dict):
            self._chained(captured, answer, api, endpoint_slug, body, previous)
            return
        path = self._write_case(captured, answer, api, endpoint_slug, body)
        if chain and 200 <= status < 300:
            response_id = response_id_of(bytes(answer.body), answer.content_type)
            if response_id is not None:
                self._turns[response_id] = path

    def _chained(self, captured: Captured, answer: Answer, api: str, endpoint_slug: str, body: dict,
                 previous: str) -> None:
        """A turn chained with previous_response_id: see the module's docstring for what is kept, and why."""
        where = f"{captured.method} {captured.path}"
        succeeded = 200 <= (answer.status or 0) < 300
        response_id = response_id_of(bytes(answer.body), answer.content_type) if succeeded else None
        if response_id is not None:
            self._turns[response_id] = None  # one recorded further turn a case: its own children are not kept
        if previous not in self._turns:
            if succeeded:
                self.report(f"not kept: {where}: chained to {previous}, a response this recorder did not see; "
                            "record the chain from its first turn")
                return
            note = "chained to a response the recorder never saw; the id is replaced by a marker no server issues"
            marked = {**body, APIS[api].recorded_chain: UNKNOWN_PREVIOUS_MARKER}
            self._write_case(captured, answer, api, endpoint_slug, marked, note)
            return
        parent = self._turns[previous]
        turns, why_not = _continuation(body)
        if parent is None or not succeeded or turns is None:
            reason = ("it continues a turn that cannot take further turns (a further turn itself, or a second child)"
                      if parent is None else why_not or f"answered HTTP {answer.status}")
            self.report(f"not kept: {where}: chained turn: {reason}")
            return
        self._turns[previous] = None
        case = json.loads(parent.read_text())
        sent = ", ".join(sorted(key for key in body if key != "model"))
        case = _with_turns(case, turns)
        case["provenance"]["note"] += (f"; turns: the next turn, sent chained with previous_response_id "
                                       f"(keys: {sent}); its other fields are this turn's; the control, sibling "
                                       f"and repeated turns are lmconform's")
        write_json_atomically(parent, self.scrubber.value(redacted(case, credentials(captured.headers))))
        self.report(f"turns added to {parent.parent.name}/{parent.name}")

    def _write_case(self, captured: Captured, answer: Answer, api: str, endpoint_slug: str, body: Any,
                    note: str | None = None) -> Path:
        """Write a new case for the request whose parsed body is `body` (None when it had none)."""
        name, version = client_identity(captured.headers)
        name = self.client or name
        status = answer.status or 0
        request: dict[str, Any] = {"method": captured.method, "path": captured.path}
        if body is NOT_JSON:
            request["raw_body"] = captured.body.decode("utf-8", errors="replace")
        elif isinstance(body, dict):
            request["body"] = {key: value for key, value in body.items() if key != "model"}
        elif body is not None:
            request["body"] = body
        answered = f"answered HTTP {status} by {self.answered_by or 'the recording endpoint'}"
        if status >= 400:
            answered += f": {error_message(bytes(answer.body))}"
        folder = cases_folder(self.folder, api)
        folder.mkdir(parents=True, exist_ok=True)
        stem = self.stem or f"recorded-{slug(name)}-{endpoint_slug}"
        document = {
            "description": "",
            "provenance": {
                "source": f"recorded from {name} {version}",
                "client": f"{name} {version}",
                "recorded": date.today().isoformat(),
                "note": "; ".join(part for part in (note, answered) if part),
                "headers": self.scrubber.headers(kept_headers(captured.headers)),
            },
            **({"feature": api} if APIS[api].optional else {}),
            "request": request,
            "expect": {"status": "success" if 200 <= status < 300 else "client_error"},
        }
        taken = descriptions_in(folder)
        index = next_index(folder, stem)
        while True:
            document["description"] = description(name, captured, request.get("body"), index, taken)
            path = folder / f"{stem}-{index}.json"
            if create(path, self.scrubber.value(redacted(document, credentials(captured.headers)))):
                break
            index += 1  # another recorder took this name meanwhile
        self.written.append(path)
        self.report(f"kept {api}/{path.name} (HTTP {status}, {name} {version})")
        return path


def _continuation(body: dict) -> tuple[tuple[Turn, ...] | None, str | None]:
    """A recorded chained turn as the further turns of the case it continues, or None and why it cannot be."""
    given = body.get("input")
    items = given if isinstance(given, list) else []
    outputs = [item for item in items if isinstance(item, dict) and item.get("type") == "function_call_output"]
    if not outputs:
        return chain_probe(given), None
    # The call id is this recording's; a played case answers the target's own call, by its id, with the output.
    if len(items) == 1 and isinstance(outputs[0].get("output"), str):
        return call_answer(outputs[0]["output"]), None
    return None, "its input answers calls by this recording's call ids, beside other items"


def _with_turns(case: dict, turns: tuple[Turn, ...]) -> dict:
    """The case with its turns right after its request, where a reader looks for what is sent."""
    document = {}
    for key, value in case.items():
        document[key] = value
        if key == "request":
            document["turns"] = [turn.document() for turn in turns]
    return document
