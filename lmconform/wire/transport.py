"""The seam between a case and a target: a transport sends one request of a case (a method, an address where the
transport has addresses, a JSON body or raw text) and returns its Exchange. A run opens one transport per case and
closes it when the case's requests are done, so a transport that holds a conversation (a process on stdio) keeps
it for the case and no longer.

Two transports: HTTP (wire/http.py) for the OpenAI-compatible APIs, and stdio (wire/stdio.py) for a VS Code
language-model bridge, a process spoken to in JSON-RPC. Which one a case takes is its API's (lmconform.api_table);
which address it goes to, the target's (`Target.base_url`, `Target.bridge_command`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from lmconform.api_table import HTTP, STDIO
from lmconform.target import Target
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpTransport
from lmconform.wire.stdio import StdioTransport


class Transport(Protocol):
    def send(self, method: str, path: str | None, body: Any = None, raw_body: str | None = None,
             headers: Mapping[str, str] | None = None) -> Exchange:
        """Never raises for what the target does: a refusal, a timeout or a broken answer is in the Exchange.
        `headers`: a case's own request headers, beside lmconform's (over HTTP; a stdio case has none)."""

    def close(self) -> None:
        """End whatever the transport holds for the case (a process, a session)."""


def open_transport(target: Target, transport: str = HTTP) -> Transport:
    """The transport named, to the target's address for it: an http(s) base URL, or a bridge's command line."""
    if transport == STDIO:
        if not target.bridge_command:
            raise ValueError("the target names no bridge command (--bridge-command) to speak stdio to")
        return StdioTransport(target)
    return open_http_transport(target)


def open_http_transport(target: Target) -> HttpTransport:
    """HTTP to the target's base URL: what a case of an API over HTTP is played on, its exchanges HttpExchanges."""
    if target.base_url.startswith(("http://", "https://")):
        return HttpTransport(target)
    raise ValueError(f"no transport for the target {target.base_url!r}: lmconform speaks http(s) and stdio")
