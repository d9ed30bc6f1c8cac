"""A target: the endpoint under test and how to talk to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from lmconform.profiles import Profile, parse_profile
from lmconform.vocabulary import Requirement

DEFAULT_READ_TIMEOUT_S = 30.0
# Cut-off for a response body. A misbehaving endpoint can stream forever; past this many bytes the
# capture stops reading, marks the exchange truncated, and the check `http.body.within_size_cap` reports it.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
# A stream that keeps sending a byte just before every read timeout would never stall, yet never end:
# the whole exchange is bounded too.
DEFAULT_DEADLINE_S = 300.0
# Generated requests each generated case sends (a chain program counts as the several requests it sends): 50 for
# each of four sources (chat and Responses, valid and invalid) keeps a run against a local model to minutes.
DEFAULT_FUZZ_EXAMPLES = 50
FUZZ_MODES = ("positive", "negative", "both")


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
    max_tokens: int | None = None  # filled into requests that set no output cap
    temperature: float | None = None  # filled into requests that set none (0 for repeatable real-model runs)
    repeat: int = 1  # answers per case; a check's verdict is its worst over them (pass^k)
    fuzz_examples: int = DEFAULT_FUZZ_EXAMPLES  # requests each generated case sends; 0 turns fuzzing off
    fuzz_mode: str = "both"  # generated valid requests ("positive"), invalid ones ("negative"), or both
    fuzz_seed: int | None = None  # None: derandomized, the same examples every run
    fuzz_save: str | None = None  # a cases folder (holding <api>/) to write each shrunk finding into, as a case
    fuzz_sources: tuple[str, ...] = ("chains", "requests")  # the sources of generated cases (lmconform.fuzz) played
    # Answers in generated wire forms per API sent through the target and straight to the upstream (the reference
    # server), and the seed that draws them; 0 leaves the `streams` source cases out of the run.
    stream_examples: int = 0
    stream_seed: int = 0
    # "lmstudio" or "lmstudio@0.3.17" (or "reference", the embedded LM Studio-like server) turns on checks of LM
    # Studio's exact answers and its documented behaviour by version (lmconform.profiles); other targets are held
    # to the OpenAI spec only.
    profile: str | None = None
    fingerprint: dict | None = field(default=None, compare=False)

    @property
    def profile_spec(self) -> Profile:
        """The profile parsed: its family and the version it documents (the plugin refused any other text)."""
        return parse_profile(self.profile)

    @property
    def profile_requirements(self) -> frozenset[Requirement]:
        """The checks' requirements this target's profile meets."""
        return self.profile_spec.requirements

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
        """The target as the results record shows it (never the key)."""
        return {
            "url": self.base_url,
            "label": self.label,
            "model": self.model,
            "server_version": self.server_version,
            "profile": self.profile,
            "fingerprint": self.fingerprint,
        }


def normalize_base_url(url: str) -> str:
    """`http://host:1234`, `http://host:1234/`, `http://host:1234/v1` all name the same server."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--endpoint must be an http(s) URL such as http://localhost:1234, not {url!r}")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}"
