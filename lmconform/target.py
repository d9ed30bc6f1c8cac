"""A target: the endpoint under test and how to talk to it. A target names its transports: an HTTP base URL for
the OpenAI-compatible APIs, a command line for a VS Code language-model bridge (JSON-RPC on the process's stdio),
or both (the embedded reference server and bridge). What a run does there is the run's (lmconform.settings)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from lmconform.api_table import HTTP, STDIO
from lmconform.profiles import Profile, parse_profile
from lmconform.vocabulary import Requirement

DEFAULT_READ_TIMEOUT_S = 30.0
# Cut-off for a response body. A misbehaving endpoint can stream forever; past this many bytes the
# capture stops reading, marks the exchange truncated, and the check `http.body.within_size_cap` reports it.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
# A stream that keeps sending a byte just before every read timeout would never stall, yet never end:
# the whole exchange is bounded too.
DEFAULT_DEADLINE_S = 300.0
# How long a client waits for the next event of a stream before it drops the stream and sends the request again:
# Codex CLI's provider setting `stream_idle_timeout_ms` (300 000 ms unless a provider sets it).
# An SSE comment line is no event.
DEFAULT_STREAM_IDLE_LIMIT_S = 300.0
# What a bridge does with a cancelled request: `strict`, one lm/responseComplete and the result, so that a client can
# always close it; `symposium`, neither, as Symposium's bridge does.
BRIDGE_PROFILES = ("strict", "symposium")
BRIDGE_PROFILE_REQUIREMENTS = {
    "strict": frozenset({Requirement.BRIDGE_STRICT}),
    "symposium": frozenset({Requirement.BRIDGE_SYMPOSIUM}),
}
# Options whose next word is a credential, in a command line shown in reports and reproductions.
_SECRET_OPTIONS = ("--api-key", "--key", "--token", "--password", "--secret")


@dataclass(frozen=True)
class Target:
    base_url: str  # scheme://host[:port][/prefix], without the trailing /v1
    api_key: str | None = None
    model: str | None = None
    label: str = "target"
    server_version: str | None = None
    read_timeout: float = DEFAULT_READ_TIMEOUT_S
    deadline: float = DEFAULT_DEADLINE_S
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    stream_idle_limit_s: float = DEFAULT_STREAM_IDLE_LIMIT_S  # the longest silence a stream may hold (no event)
    # "lmstudio" or "lmstudio@0.3.17" (or "reference", the embedded LM Studio-like server) turns on checks of LM
    # Studio's exact answers and its documented behaviour by version (lmconform.profiles); other targets are held
    # to the OpenAI spec only.
    profile: str | None = None
    fingerprint: dict | None = field(default=None, compare=False)
    # A VS Code language-model bridge: the command that starts it (one process per case), the model id it offers
    # (from lm/provideLanguageModelChatInformation when not given) and what it does with a cancelled request.
    bridge_command: tuple[str, ...] = ()
    bridge_model: str | None = None
    bridge_profile: str = "strict"

    @property
    def answer_deadline(self) -> float:
        """The longest a whole exchange may take: the deadline, but never less than the read timeout, since a user
        who waits that long for a first byte waits that long for an answer that arrives in one piece."""
        return max(self.deadline, self.read_timeout)

    @property
    def profile_spec(self) -> Profile:
        """The profile parsed: its family and the version it documents (the plugin refused any other text)."""
        return parse_profile(self.profile)

    @property
    def profile_requirements(self) -> frozenset[Requirement]:
        """The checks' requirements this target's profile (and its bridge's) meets."""
        has_bridge = self.bridge_command or self.embedded
        bridge = BRIDGE_PROFILE_REQUIREMENTS.get(self.bridge_profile, frozenset()) if has_bridge else frozenset()
        return self.profile_spec.requirements | bridge

    @property
    def embedded(self) -> bool:
        """Neither an address nor a command: the run starts the reference server and the reference bridge."""
        return not self.base_url and not self.bridge_command

    def reaches(self, transport: str) -> bool:
        """Whether the target can be spoken to over `transport` (the embedded target reaches both)."""
        if self.embedded:
            return True
        return bool(self.base_url) if transport == HTTP else transport == STDIO and bool(self.bridge_command)

    @property
    def shown_command(self) -> str:
        """The bridge command as reports show it, a credential given on it as [Filtered]."""
        return shown_command(self.bridge_command, self.secrets)

    @property
    def engine(self) -> str | None:
        """The engine the fingerprint found (LM Studio's llama.cpp or MLX runtime), if any."""
        engine = (self.fingerprint or {}).get("engine")
        return engine if isinstance(engine, str) else None

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,) if self.api_key else ()

    def header_record(self) -> dict:
        """The target as the results record shows it (never the key). A bridge alone has no URL: its command
        stands in the `url` field, as `stdio: CMD`."""
        record = {
            "url": self.base_url or (f"stdio: {self.shown_command}" if self.bridge_command else ""),
            "label": self.label,
            "model": self.model if self.base_url or not self.bridge_command else self.bridge_model,
            "server_version": self.server_version,
            "profile": self.profile,
            "fingerprint": self.fingerprint,
        }
        if self.bridge_command:
            record["bridge"] = {"command": self.shown_command, "model": self.bridge_model,
                                "profile": self.bridge_profile}
        return record


def parse_command(text: str) -> tuple[str, ...]:
    """A command line as a shell would split it (`lmconform bridge --agent echo`); a bad one is a ValueError."""
    try:
        words = tuple(shlex.split(text))
    except ValueError as error:
        raise ValueError(f"--bridge-command {text!r} cannot be split into words: {error}") from None
    if not words:
        raise ValueError("--bridge-command needs a command line, such as \"lmconform bridge\"")
    return words


def shown_command(command: tuple[str, ...], secrets: tuple[str, ...] = ()) -> str:
    """`command` as one shell-safe line, with the value after a credential option and any known secret hidden."""
    shown: list[str] = []
    for word in command:
        if shown and shown[-1] in _SECRET_OPTIONS:
            word = "[Filtered]"
        elif word.startswith(tuple(f"{option}=" for option in _SECRET_OPTIONS)):
            word = word.split("=", 1)[0] + "=[Filtered]"
        for secret in secrets:
            if secret:
                word = word.replace(secret, "[Filtered]")
        shown.append(word)
    return shlex.join(shown)


def normalize_base_url(url: str) -> str:
    """`http://host:1234`, `http://host:1234/`, `http://host:1234/v1` all name the same server."""
    normalized = _base_url(url)
    if normalized is None:
        raise ValueError(f"--endpoint must be an http(s) URL, not {url!r}: {address_hint(url)}")
    return normalized


def address_hint(text: str) -> str:
    """What to tell someone whose `text` is no server address: the address they likely meant (`localhost:1234`
    lacks only its scheme), else what one looks like."""
    if "://" not in text and _base_url(f"http://{text.strip()}") is not None:
        return f"did you mean http://{text.strip()}?"
    return "give one such as http://localhost:1234"


def _base_url(url: str) -> str | None:
    parts = urlsplit(url.strip())
    try:
        port_ok = parts.port is None or parts.port > 0  # urlsplit raises for a port past 65535 or not a number
    except ValueError:
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        return None
    path = parts.path.rstrip("/")
    path = path.removesuffix("/v1")
    return f"{parts.scheme}://{parts.netloc}{path}"
