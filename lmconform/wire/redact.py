"""Secrets never leave the process: every header or value that could carry a key is replaced."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping

FILTERED = "[Filtered]"

# Header names (lower case) whose values are credentials in the APIs we speak to.
SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})
SCHEMED_HEADERS = frozenset({"authorization", "proxy-authorization"})


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A copy of `headers` with credential values replaced; the scheme of an Authorization header stays."""
    redacted = {}
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS:
            # Only Authorization values start with a scheme worth keeping ("Bearer"); any other first word (a
            # cookie's "session=…") may be the secret itself.
            scheme = value.split(" ", 1)[0] if " " in value and name.lower() in SCHEMED_HEADERS else ""
            redacted[name] = f"{scheme} {FILTERED}" if scheme else FILTERED
        else:
            redacted[name] = value
    return redacted


def redact_text(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every occurrence of each secret in free text (messages, evidence, bodies echoed back)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, FILTERED)
    return text


def curl_command(method: str, url: str, headers: Mapping[str, str], body: object | None) -> str:
    """A shell-safe curl that repeats a request; headers must already be redacted."""
    parts = ["curl", "-sS", "-N", "-X", method, shlex.quote(url)]
    for name, value in headers.items():
        if name.lower() in {"content-length", "host", "accept-encoding", "connection", "user-agent"}:
            continue
        parts += ["-H", shlex.quote(f"{name}: {value}")]
    if body is not None:
        parts += ["--data-binary", shlex.quote(json.dumps(body, ensure_ascii=False))]
    return " ".join(parts)
