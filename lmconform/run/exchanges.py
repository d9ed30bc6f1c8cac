"""What the results record keeps of the exchanges behind its findings: each case's request as sent and answer as
received, as redacted text, so that a report built from the record alone (`lmconform report`) shows the bytes behind
a finding, whichever process played the case.

Only cases with a finding or an ERROR are kept: the report shows no exchange of a case that passed. A streamed
answer can run to megabytes, so a body is cut at EXCHANGE_BODY_CAP, and the record holds at most EXCHANGES_BUDGET
characters of exchanges, the worst cases first; a case past the budget keeps its finding's evidence and curl.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from lmconform.vocabulary import FINDINGS, Outcome
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpExchange, HttpRequest
from lmconform.wire.redact import redact_headers, redact_text
from lmconform.wire.stdio import StdioExchange
from lmconform.wire.websocket import UPGRADED, WebSocketExchange, WebSocketRequest

EXCHANGE_BODY_CAP = 64 * 1024
EXCHANGES_BUDGET = 8 * 1024 * 1024
KEPT_OUTCOMES = FINDINGS | {Outcome.ERROR}


def keeps_exchange(outcome: str) -> bool:
    """Whether a verdict of this outcome makes the record keep its case's exchange."""
    return outcome in KEPT_OUTCOMES


def exchange_text(exchange: Exchange, secrets: tuple[str, ...]) -> str:
    """The request as sent and the answer as received: status, headers, and the body as text up to the cap; over
    stdio, the case's whole conversation with the process, line by line."""
    if isinstance(exchange, StdioExchange):
        said = exchange.process.transcript(EXCHANGE_BODY_CAP) if exchange.process else f"[{exchange.error}]"
        return redact_text(said, secrets)
    if isinstance(exchange, WebSocketExchange):
        return redact_text(_socket_text(exchange), secrets)
    assert isinstance(exchange, HttpExchange) and isinstance(exchange.request, HttpRequest)
    request = exchange.request
    lines = [f"{request.method} {request.url}", *(f"{name}: {value}" for name, value in request.headers.items())]
    if request.body is not None:
        body = request.body if isinstance(request.body, str) else json.dumps(request.body, ensure_ascii=False, indent=2)
        lines += ["", body]
    lines += ["", f"HTTP {exchange.status}" if exchange.status is not None else "no answer"]
    lines += [f"{name}: {value}" for name, value in redact_headers(exchange.headers).items()]
    answer = exchange.body
    lines += ["", answer[:EXCHANGE_BODY_CAP].decode("utf-8", errors="replace")]
    if len(answer) > EXCHANGE_BODY_CAP:
        lines.append(f"[… {len(answer) - EXCHANGE_BODY_CAP} more bytes: the record keeps the first "
                     f"{EXCHANGE_BODY_CAP} of {len(answer)}; the finding's curl fetches it all]")
    if exchange.truncated:
        lines.append(f"[the capture stopped reading at the {exchange.max_body_bytes} byte cap (--max-body-bytes)]")
    if exchange.error:
        lines.append(f"[{exchange.error}]")
    return redact_text("\n".join(lines), secrets)


def _socket_text(exchange: WebSocketExchange) -> str:
    """A message on a WebSocket and what came back: the upgrade's answer, each text frame, how the socket ended."""
    request = exchange.request
    url, socket = (request.url, request.connection) if isinstance(request, WebSocketRequest) else ("?", 1)
    lines = [f"WebSocket {url} (socket {socket})", "", json.dumps(request.body, ensure_ascii=False, indent=2), ""]
    if exchange.status != UPGRADED:
        lines += [f"upgrade answered HTTP {exchange.status}" if exchange.status is not None else "no answer to the "
                  "upgrade", exchange.refusal[:EXCHANGE_BODY_CAP].decode("utf-8", errors="replace")]
    shown = 0
    for position, frame in enumerate(exchange.frames):
        if shown + len(frame) > EXCHANGE_BODY_CAP:
            lines.append(f"[… {len(exchange.frames) - position} more frames: the record keeps the first "
                         f"{EXCHANGE_BODY_CAP} characters]")
            break
        lines.append(frame)
        shown += len(frame)
    lines += [f"[{what}]" for what in (exchange.closed and f"closed: {exchange.closed}", exchange.stalled,
                                        exchange.error) if what]
    return "\n".join(lines)


def kept_exchanges(rows: Iterable[dict], texts: dict[str, str]) -> dict[str, str]:
    """Of `texts` (case id -> exchange text), those the record keeps for these verdict rows, by case id: the cases
    with a finding or an ERROR, worst first until the budget is spent."""
    worst: dict[str, int] = {}
    for row in rows:
        if keeps_exchange(row["outcome"]) and row["case"] in texts:
            worst[row["case"]] = max(worst.get(row["case"], 0), Outcome(row["outcome"]).severity)
    kept, spent = {}, 0
    for case in sorted(worst, key=lambda case: (-worst[case], case)):
        spent += len(texts[case])
        if spent > EXCHANGES_BUDGET:
            break
        kept[case] = texts[case]
    return dict(sorted(kept.items()))
