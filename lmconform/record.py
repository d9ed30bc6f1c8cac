"""`lmconform record`: keep what real clients send as case files.

A recording endpoint on a loopback port answers every request as the embedded reference server does (or passes
it to a loopback upstream) and writes the request as `<cases>/<api>/recorded-<client>-<endpoint>-<n>.json`, so
that a case's shape is what a released SDK sends rather than what someone remembers it sending.

What is kept of a request, and why:

- the body without `model`: the suite fills in the target's model;
- the headers as provenance only (the runner sends its own): credentials as `[Filtered]`, transport headers and
  the ones that differ from machine to machine or from try to try left out;
- every credential the request carried, wherever else it appears (a key echoed into a body), as `[Filtered]`.

A chained Responses turn names a response id that only the server that issued it knows, so it cannot be
replayed as sent. It becomes the turns of the first turn's case, chained to the target's own answer when the case
is played: the recorded input with lmconform's control, sibling and repeated turns around it (a chain probe,
lmconform.cases.chain_probe), or the answer to the first turn's function call. A turn chained to an id this
recorder never saw is kept only when it was refused, with a marker in place of the id: it is then the
unknown-previous case. Any other chained turn (a third turn, a second child of one response) is answered but not
kept, and the recorder says so.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import re
import secrets
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lmconform.apis import APIS
from lmconform.cases import Turn, call_answer, chain_probe
from lmconform.exit_status import USAGE_ERROR
from lmconform.reference import ReferenceServer
from lmconform.reference.store import MAX_BODY_BYTES
from lmconform.run import write_json_atomically
from lmconform.target import normalize_base_url
from lmconform.wire.redact import FILTERED, SECRET_HEADERS, redact_headers, redact_text
from lmconform.wire.sse import parse_sse

# The endpoints the suite has cases for: (method, path) -> (case folder, the endpoint's part of the file name).
ENDPOINTS = {(api.method, api.path): (api.name, api.slug) for api in APIS.values()}
FEATURES = {"responses": "responses"}
# A recorder script names what it is doing in this header; it becomes the case's description and is not recorded.
LABEL_HEADER = "x-lmconform-label"
# Hop-by-hop and framing headers: the transport's, not the client's.
TRANSPORT_HEADERS = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
                               "upgrade", "expect", "accept-encoding", "proxy-connection"})
# Headers whose values differ between machines (OS, CPU, runtime build) or between tries of one request.
VOLATILE_HEADERS = frozenset({"x-stainless-os", "x-stainless-arch", "x-stainless-runtime-version",
                              "x-stainless-retry-count", "idempotency-key", "traceparent", "tracestate",
                              "x-request-id", "date"})
# Stands for the id of a response the recorder never saw; no server issues it, so a replay is refused as it was.
UNKNOWN_PREVIOUS_MARKER = "resp_lmconform_recorded_unknown_previous"
NOT_JSON = object()  # a body that does not parse, kept as the raw_body it was
_AGENTS_USER_AGENT = re.compile(r"Agents/Python (\S+)")
_STAINLESS_LANGUAGES = {"python": "openai-python", "js": "openai-node"}
_UPSTREAM_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)


def client_identity(headers: Mapping[str, str]) -> tuple[str, str]:
    """The client's name and version as its headers tell them: `("openai-python", "3.54.0")`. The agents SDK
    drives the openai SDK, so its version says which openai SDK too: `("openai-agents", "0.24.0 (openai-python
    3.54.0)")`."""
    agent = headers.get("user-agent", "")
    language, package = headers.get("x-stainless-lang"), headers.get("x-stainless-package-version")
    sdk = (_STAINLESS_LANGUAGES.get(language, f"openai-{language}"), package) if language and package else None
    if found := _AGENTS_USER_AGENT.match(agent):
        return "openai-agents", f"{found[1]} ({' '.join(sdk)})" if sdk else found[1]
    if sdk:
        return sdk
    product = agent.split(" ", 1)[0]
    name, _, version = product.partition("/")
    return name or "unknown-client", version or "unknown version"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "client"


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers worth keeping as evidence of what the client sent, credentials redacted, sorted by name."""
    kept = {}
    for name, value in headers.items():
        name = name.lower()
        if name in TRANSPORT_HEADERS | VOLATILE_HEADERS | {LABEL_HEADER}:
            continue
        # Only Authorization has a scheme worth keeping; redact_headers would keep a cookie's first pair as one.
        kept[name] = FILTERED if name in SECRET_HEADERS and not name.endswith("authorization") else value
    return dict(sorted(redact_headers(kept).items()))


def credentials(headers: Mapping[str, str]) -> tuple[str, ...]:
    """Every credential value in `headers`, with and without its scheme, to be redacted wherever it appears."""
    found: list[str] = []
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS and value.strip():
            found += [value.strip(), value.split(" ", 1)[-1].strip()]
            if name.lower() == "cookie":
                found += [pair.partition("=")[2].strip() for pair in value.split(";")]
    # Longest first, so that a key is not half-replaced by a shorter secret inside it.
    return tuple(sorted({secret for secret in found if secret}, key=len, reverse=True))


def _redacted(value: Any, secrets_: tuple[str, ...]) -> Any:
    """`value` with every secret replaced in every string, keys included."""
    if isinstance(value, str):
        return redact_text(value, secrets_)
    if isinstance(value, dict):
        return {_redacted(key, secrets_): _redacted(item, secrets_) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets_) for item in value]
    return value


def _response_id(body: bytes, content_type: str) -> str | None:
    """The id of the Responses object in an answer: its JSON body, or the response of its first stream event."""
    if content_type.startswith("text/event-stream"):
        for event in parse_sse([body]).events:
            response = _json(event.data.encode()).get("response")
            if isinstance(response, dict) and isinstance(response.get("id"), str):
                return response["id"]
        return None
    found = _json(body).get("id")
    return found if isinstance(found, str) else None


def _parsed(data: bytes) -> Any:
    """The JSON in `data`, or NOT_JSON."""
    try:
        return json.loads(data)
    except ValueError:
        return NOT_JSON


def _json(data: bytes) -> dict:
    """The JSON object in `data`; empty when it holds anything else."""
    value = _parsed(data)
    return value if isinstance(value, dict) else {}


def _error_message(body: bytes) -> str:
    """What a refusal said: OpenAI's `{"error": {"message"}}`, LM Studio's `{"error": "..."}`, or the raw text."""
    error = _json(body).get("error")
    message = error.get("message") if isinstance(error, dict) else error
    text = message if isinstance(message, str) else body.decode("utf-8", errors="replace")
    return " ".join(text.split())[:160]


@dataclass
class _Answer:
    """What the answering app sent back, as far as recording needs it."""

    status: int | None = None
    content_type: str = ""
    body: bytearray = field(default_factory=bytearray)


@dataclass(frozen=True)
class _Captured:
    method: str
    path: str  # with the query string, if any
    headers: dict[str, str]  # lower-case names, as received
    body: bytes
    label: str | None


class Recorder:
    """The recording endpoint as an ASGI app: each request is answered by `answerer` and then written.

    Requests are handled one at a time: a client's next turn often follows the moment the last byte of the
    previous answer arrives, and its case must be written by then for a chained turn to find the turn it continues.
    Files are numbered in arrival order for the same reason.
    """

    def __init__(self, folder: Path, answerer: ASGIApp, client: str | None = None, answered_by: str = "",
                 report: Callable[[str], None] | None = None) -> None:
        self.folder = folder
        self.answerer = answerer
        self.client = client
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
        captured = _Captured(request.method, request.url.path + (f"?{query}" if query else ""), headers,
                             bytes(body), headers.get(LABEL_HEADER))
        answer = _Answer()
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

    def _keep(self, captured: _Captured, answer: _Answer) -> None:
        try:
            self._record(captured, answer)
        except OSError as error:
            self.report(f"not kept: {captured.method} {captured.path}: {error}")

    def _record(self, captured: _Captured, answer: _Answer) -> None:
        where = f"{captured.method} {captured.path}"
        endpoint = ENDPOINTS.get((captured.method, captured.path))
        if endpoint is None:
            self.report(f"not kept: {where}: the suite has no cases for this endpoint")
            return
        status = answer.status or 0
        if not (200 <= status < 300 or 400 <= status < 500):
            self.report(f"not kept: {where}: answered HTTP {status}, neither a success nor a client error")
            return
        api, endpoint_slug = endpoint
        body = _parsed(captured.body) if captured.body else None
        previous = body.get("previous_response_id") if api == "responses" and isinstance(body, dict) else None
        if isinstance(previous, str):
            self._chained(captured, answer, body, previous)
            return
        path = self._write_case(captured, answer, api, endpoint_slug, body)
        if api == "responses" and 200 <= status < 300:
            response_id = _response_id(bytes(answer.body), answer.content_type)
            if response_id is not None:
                self._turns[response_id] = path

    def _chained(self, captured: _Captured, answer: _Answer, body: dict, previous: str) -> None:
        """A turn chained with previous_response_id: see the module's docstring for what is kept, and why."""
        where = f"{captured.method} {captured.path}"
        succeeded = 200 <= (answer.status or 0) < 300
        response_id = _response_id(bytes(answer.body), answer.content_type) if succeeded else None
        if response_id is not None:
            self._turns[response_id] = None  # one recorded further turn a case: its own children are not kept
        if previous not in self._turns:
            if succeeded:
                self.report(f"not kept: {where}: chained to {previous}, a response this recorder did not see; "
                            "record the chain from its first turn")
                return
            note = "chained to a response the recorder never saw; the id is replaced by a marker no server issues"
            marked = {**body, "previous_response_id": UNKNOWN_PREVIOUS_MARKER}
            self._write_case(captured, answer, "responses", "responses", marked, note)
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
        write_json_atomically(parent, _redacted(case, credentials(captured.headers)))
        self.report(f"turns added to {parent.parent.name}/{parent.name}")

    def _write_case(self, captured: _Captured, answer: _Answer, api: str, endpoint_slug: str, body: Any,
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
            answered += f": {_error_message(bytes(answer.body))}"
        folder = self.folder / api
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"recorded-{_slug(name)}-{endpoint_slug}"
        document = {
            "description": "",
            "provenance": {
                "source": f"recorded from {name} {version}",
                "client": f"{name} {version}",
                "recorded": date.today().isoformat(),
                "note": "; ".join(part for part in (note, answered) if part),
                "headers": kept_headers(captured.headers),
            },
            **({"feature": FEATURES[api]} if api in FEATURES else {}),
            "request": request,
            "expect": {"status": "success" if 200 <= status < 300 else "client_error"},
        }
        taken = _descriptions(folder)
        index = _next_index(folder, stem)
        while True:
            document["description"] = _description(name, captured, request.get("body"), index, taken)
            path = folder / f"{stem}-{index}.json"
            if _create(path, _redacted(document, credentials(captured.headers))):
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


def _descriptions(folder: Path) -> set[str]:
    return {_json(path.read_bytes()).get("description") for path in folder.glob("*.json")} - {None}


def _next_index(folder: Path, stem: str) -> int:
    numbered = (re.fullmatch(rf"{re.escape(stem)}-(\d+)\.json", path.name) for path in folder.glob(f"{stem}-*.json"))
    return max((int(found[1]) for found in numbered if found), default=0) + 1


def _description(name: str, captured: _Captured, body: Any, index: int, taken: set[str]) -> str:
    """The label the recorder script gave, or a summary of the request; the index makes it unique when taken."""
    if captured.label:
        what = captured.label
    elif not isinstance(body, dict):
        what = f"{captured.method} {captured.path}"
    else:
        tools = body.get("tools")
        count = len(tools) if isinstance(tools, list) else 0
        kind = "chat completion" if captured.path.endswith("/chat/completions") else "response"
        what = ("streamed " if body.get("stream") is True else "") + kind + (f" with {count} tools" if count else "")
    description = f"{name}: {what}"
    if description[:80] not in taken:
        return description[:80]
    suffix = f" #{index}"
    return description[:80 - len(suffix)] + suffix


def _create(path: Path, document: dict) -> bool:
    """Write `document` as `path` unless a file is already there: whole or not at all, and never over a file.
    A hard link is the atomic create-if-absent that a rename is not."""
    pending = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.pending")
    write_json_atomically(pending, document)
    try:
        path.hardlink_to(pending)
    except FileExistsError:
        return False
    finally:
        pending.unlink()
    return True


class Upstream:
    """Passes each request to a server on this machine and streams its answer back unchanged."""

    def __init__(self, base_url: str) -> None:
        self.base_url = loopback_base_url(base_url)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await request.body()
        headers = {name: value for name, value in request.headers.items()
                   if name.lower() not in TRANSPORT_HEADERS | {LABEL_HEADER}}
        headers["accept-encoding"] = "identity"  # the recorder reads the answer for the response id it carries
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.base_url + request.url.path + (f"?{query}" if query else "")
        started = False
        try:
            async with httpx.AsyncClient(timeout=_UPSTREAM_TIMEOUT) as client:
                async with client.stream(request.method, url, headers=headers, content=body) as response:
                    passed = [(name.encode("latin-1"), value.encode("latin-1"))
                              for name, value in response.headers.items()
                              if name.lower() not in TRANSPORT_HEADERS - {"content-length"}]
                    await send({"type": "http.response.start", "status": response.status_code, "headers": passed})
                    started = True
                    async for piece in response.aiter_raw():
                        await send({"type": "http.response.body", "body": piece, "more_body": True})
        except httpx.HTTPError as error:
            if not started:
                answer = JSONResponse({"error": f"the upstream {self.base_url} did not answer: {error}"}, 502)
                await answer(scope, receive, send)
                return
            # Cut off mid-answer: the client sees the answer end where the upstream's did.
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def loopback_base_url(url: str) -> str:
    """`url` without `/v1`, when it names a server on this machine; recording never sends traffic elsewhere."""
    base = normalize_base_url(url)
    host = urlsplit(base).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"--upstream must be a server on this machine (127.0.0.1, ::1 or localhost), not {url!r}")
    return base


class RecordingServer(ReferenceServer):
    """The recording endpoint on a loopback port, in a background thread, started and stopped as the reference
    server is. It answers as its own reference server, or passes requests to `upstream`.

        with RecordingServer(Path("fixtures/cases")) as server:
            ...  # point a client at server.base_url; server.recorder.written lists the files
    """

    def __init__(self, folder: Path, client: str | None = None, upstream: str | None = None, port: int = 0,
                 report: Callable[[str], None] | None = None) -> None:
        super().__init__(port=port)
        if upstream is None:
            answerer, answered_by = self.app, "the embedded reference server"
        else:
            answerer, answered_by = Upstream(upstream), "a loopback upstream"
        self.recorder = Recorder(folder, answerer, client, answered_by, report)
        stopping = self.app.state.stopping  # set on shutdown, so that the reference app's held-open streams end
        self.app = Starlette(routes=[Route("/{path:path}", self.recorder)])
        self.app.state.stopping = stopping


def _run(args: argparse.Namespace) -> int:
    if args.to.name in APIS:
        print(f"lmconform record: --to names the cases folder that holds {', '.join(sorted(APIS))}/ "
              f"(e.g. fixtures/cases), not {args.to}", file=sys.stderr)
        return USAGE_ERROR
    try:
        server = RecordingServer(args.to, args.client, args.upstream, args.listen)
    except ValueError as error:
        print(f"lmconform record: {error}", file=sys.stderr)
        return USAGE_ERROR
    try:
        server.start()
    except OSError as error:
        print(f"lmconform record: cannot listen on 127.0.0.1:{args.listen}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    print(f"recording on {server.base_url} into {args.to}/<api>/ (answered by {server.recorder.answered_by}); "
          "Ctrl-C stops", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print(f"{len(server.recorder.written)} case files written", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """`record --listen PORT --to FOLDER` under the `lmconform` command."""
    parser = subparsers.add_parser(
        "record", help="keep what a client sends as case files",
        description="Listens on 127.0.0.1:PORT, answers as the embedded reference server (or the --upstream "
                    "server) and writes each request as FOLDER/<api>/recorded-<client>-<endpoint>-<n>.json. "
                    "Credentials are written as [Filtered]; no file is ever overwritten.")
    parser.add_argument("--listen", type=int, required=True, metavar="PORT", help="loopback port to listen on")
    parser.add_argument("--to", type=Path, required=True, metavar="FOLDER",
                        help="the cases folder that holds chat/ and responses/, e.g. fixtures/cases")
    parser.add_argument("--client", metavar="NAME",
                        help="client name for file names and provenance (default: from its headers)")
    parser.add_argument("--upstream", metavar="URL",
                        help="pass requests to this server on this machine instead of the reference server")
    parser.set_defaults(handler=_run)
