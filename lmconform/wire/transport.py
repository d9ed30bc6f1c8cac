"""The seam between a case and a target: a transport sends one request of a case (a method, an address where the
transport has addresses, a JSON body or raw text) and returns its Exchange. A run opens one transport per case and
closes it when the case's requests are done, so a transport that holds a conversation (a process on stdio) keeps
it for the case and no longer.
"""

from __future__ import annotations

from typing import Any, Protocol

from lmconform.target import Target
from lmconform.wire.exchange import Exchange
from lmconform.wire.http import HttpTransport


class Transport(Protocol):
    def send(self, method: str, path: str | None, body: Any = None, raw_body: str | None = None) -> Exchange:
        """Never raises for what the target does: a refusal, a timeout or a broken answer is in the Exchange."""

    def close(self) -> None:
        """End whatever the transport holds for the case (a process, a session)."""


def open_transport(target: Target) -> Transport:
    """The transport a target names: an http(s) base URL."""
    if target.base_url.startswith(("http://", "https://")):
        return HttpTransport(target)
    raise ValueError(f"no transport for the target {target.base_url!r}: lmconform speaks http(s)")
