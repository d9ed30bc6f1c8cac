"""What a recorded case must not keep of the machine or the person that recorded it, and keeps in shape.

A coding agent tells the model where it runs: its working folder, the OS version, the user's home; and it names its
session, device and installation in headers and in the body (Claude Code's `metadata.user_id`, Codex's
`client_metadata`). Each is replaced where it appears, in headers and body alike, by a placeholder of the same kind:
a UUID by a UUID (the same one for every place the same id appeared, so that a session id that is also a thread id
stays one id), a long hex id by zeros, a folder by a neutral folder, a name by `[user]` or `[host]`. The JSON's shape
is kept: what a server is checked against is what the agent sends, not who sent it.
"""

from __future__ import annotations

import getpass
import platform
import re
import socket
from pathlib import Path
from typing import Any

# Headers that carry one session, request or window of a client: their value is the session's, not the client's.
SESSION_HEADERS = frozenset({"x-claude-code-session-id", "session-id", "thread-id", "x-session-id",
                             "x-session-affinity", "x-client-request-id", "x-codex-window-id"})
SESSION = "[session id]"
PLACEHOLDER_UUID = "00000000-0000-4000-8000-"  # then the id's number in the recording, on 12 digits
UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
LONG_HEX = re.compile(r"\b[0-9a-fA-F]{32,}\b")  # a device id, an installation's hash
# lmconform's own sandboxes (lmconform.agents.sandbox): a random folder name per run.
SANDBOX = re.compile(r"lmconform-agent-[A-Za-z0-9_]{8}")
# The OS of a user agent: `codex_exec/0.171.0 (Debian 12.0.0; x86_64)`.
USER_AGENT_OS = re.compile(r"\((?:[^;()]+); (x86_64|aarch64|arm64|amd64|x64)\)")


class Scrubber:
    """Replaces this machine's identifiers; one per recording, so an id keeps its placeholder across its cases."""

    def __init__(self) -> None:
        self._uuids: dict[str, str] = {}
        home = str(Path.home())
        user = getpass.getuser()
        # Longest first, so that a longer name is replaced before a shorter one inside it.
        names = [(f"/home/{user}", "/home/[user]"), (f"/Users/{user}", "/Users/[user]")]
        host = socket.gethostname()
        if len(host) >= 4:
            names.append((host, "[host]"))
        release = platform.release()
        if release:
            names.append((release, "[os version]"))
        self._names = sorted(names, key=lambda pair: len(pair[0]), reverse=True)
        # The home folder as a whole path (`/root/…`, `"/root"`), never the same letters inside another path.
        self._home = re.compile(rf"(?<![\w/.-]){re.escape(home)}(?=[/\"'\s]|$)") if home not in ("/", "") else None

    def text(self, text: str) -> str:
        text = SANDBOX.sub("lmconform-agent-sandbox", text)
        text = UUID.sub(self._uuid, text)
        text = LONG_HEX.sub(lambda found: "0" * len(found[0]), text)
        text = USER_AGENT_OS.sub(r"(OS; \1)", text)
        if self._home is not None:
            text = self._home.sub("/home/[user]", text)
        for name, placeholder in self._names:
            text = text.replace(name, placeholder)
        return text

    def _uuid(self, found: re.Match) -> str:
        key = found[0].lower()
        if key.startswith(PLACEHOLDER_UUID):  # scrubbed already
            return found[0]
        if key not in self._uuids:
            self._uuids[key] = f"{PLACEHOLDER_UUID}{len(self._uuids) + 1:012d}"
        return self._uuids[key]

    def value(self, value: Any) -> Any:
        """`value` with every string scrubbed, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(key): self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {name: SESSION if name in SESSION_HEADERS else self.text(value) for name, value in headers.items()}
