"""Server profiles: what `--profile` holds a target to beyond the OpenAI spec.

`lmstudio` is LM Studio as its changelog documents it, at its latest version; `lmstudio@0.3.17` is the same
server as it was documented at 0.3.17. LM Studio publishes no version over HTTP, so the operator names it. Where
a version documents that it lacks a feature (`tool_choice: "required"` arrived in 0.3.15, on the llama.cpp
engine only; streamed usage in 0.3.18), the checks of that feature say UNSUPPORTED instead of FAILED: documented
behaviour passes, and what LM Studio documents but does not do still fails. Each profile also knows the error
shape each endpoint answers with (LM Studio's chat completions: a bare string; its Responses API: OpenAI's
object), so a shape check holds each endpoint to its own documented form.

Values LM Studio accepts on purpose where OpenAI's reference rules them out (`max_tokens: -1` for no limit, a chat
request without `model`) are its schema overlay's (lmconform/schemas/overlays/lmstudio.json): under `--profile
lmstudio` no generated invalid request sends them, and the schema checks do not flag them.

`reference` is lmconform's embedded server: LM Studio's exact answers (its error shapes, its Zod errors) with
every feature present, so that each check can be proven to pass on it and to fail on a fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lmconform.api_table import APIS
from lmconform.vocabulary import Requirement

CHANGELOG = "https://lmstudio.ai/docs/developer/api-changelog"
FAMILIES = ("lmstudio", "reference")
# What each family lets checks hold the target to: the reference server answers as LM Studio does, and more.
FAMILY_REQUIREMENTS = {
    "lmstudio": frozenset({Requirement.LMSTUDIO_PROFILE}),
    "reference": frozenset({Requirement.LMSTUDIO_PROFILE, Requirement.REFERENCE_PROFILE}),
}
_VERSION = re.compile(r"(\d+(?:\.\d+){1,3})(?:[+\-. ]?(?:b|beta|build)?\s*\d*)?")

Version = tuple[int, ...]


@dataclass(frozen=True)
class Documented:
    """A feature as LM Studio's changelog or docs state it: the first version that has it (None: no version
    documents it), and on which engine only, if it says so."""

    since: Version | None
    text: str
    source: str = CHANGELOG
    engine: str | None = None  # "llama.cpp": not on the MLX engine


def version_of(text: str) -> Version:
    """`0.3.17`, `0.4.20+1`, `0.3.21 beta 3` → (0, 3, 17), (0, 4, 20), (0, 3, 21)."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a version such as 0.3.29")
    return tuple(int(part) for part in match[1].split("."))


def _shown(version: Version) -> str:
    return ".".join(map(str, version))


# Keys are what checks ask about (`Profile.lacks`), or a case's `feature`. Sources: the API changelog (0.3.5 to
# 0.4.1), the tool-use and structured-output docs, and the bug tracker where the docs are silent.
LMSTUDIO_FEATURES = {
    **{api.name: Documented(*api.lmstudio_since) for api in APIS.values() if api.lmstudio_since},  # their routes
    "tool_choice_required": Documented(
        (0, 3, 15), 'tool_choice "required" arrived in 0.3.15, on the llama.cpp engine only', engine="llama.cpp"),
    "streamed_finish_tool_calls": Documented(
        (0, 3, 15), 'streamed answers set finish_reason "tool_calls" since 0.3.15'),
    "stream_usage": Documented((0, 3, 18), "stream_options.include_usage is supported since 0.3.18"),
    "stream_error_object": Documented(
        (0, 3, 18), "errors sent from streaming endpoints follow OpenAI's format since 0.3.18"),
    "reasoning_field": Documented(
        (0, 3, 23), "gpt-oss reasoning moved out of `content` into `reasoning` in 0.3.23"),
    "response_format_json_object": Documented(
        None, 'response_format is documented as "json_schema" (and "text" since 0.3.18), not "json_object"',
        "https://lmstudio.ai/docs/developer/openai-compat/structured-output"),
}
# The error body each endpoint answers with: "string" is `{"error": "…"}`, "object" is OpenAI's
# `{"error": {"message", "type", "param", "code"}}`; as each API's entry says.
LMSTUDIO_ERROR_SHAPES = {api.name: api.lmstudio_errors for api in APIS.values() if api.lmstudio_errors}


@dataclass(frozen=True)
class Profile:
    family: str | None = None  # None: the OpenAI spec only
    version: Version | None = None  # None: the latest documented behaviour

    @property
    def requirements(self) -> frozenset[Requirement]:
        return FAMILY_REQUIREMENTS.get(self.family or "", frozenset())

    def __str__(self) -> str:
        if self.family is None:
            return "none"
        return f"{self.family}@{_shown(self.version)}" if self.version else self.family

    def lacks(self, feature: str | None, engine: str | None = None) -> str | None:
        """Why this profile's server documents that it lacks `feature` (None when it has it, or says nothing).
        `engine` is the engine the fingerprint found, when a feature is documented for one engine only."""
        documented = LMSTUDIO_FEATURES.get(feature or "") if self.family == "lmstudio" else None
        if documented is None:
            return None
        if documented.since is None:
            return f"LM Studio documents no such feature: {documented.text} ({documented.source})"
        if self.version is not None and self.version < documented.since:
            return f"LM Studio {_shown(self.version)} predates it: {documented.text} ({documented.source})"
        if documented.engine and engine and not engine.lower().startswith(documented.engine):
            return f"not on the {engine} engine: {documented.text} ({documented.source})"
        return None

    def error_shape(self, api: str) -> str | None:
        """The documented error shape of `api` ("string" or "object"); None when the profile says nothing."""
        return LMSTUDIO_ERROR_SHAPES.get(api) if self.family in FAMILIES else None


def parse_profile(text: str | None) -> Profile:
    """`lmstudio`, `lmstudio@0.3.17` or `reference`; None or "" is no profile. Raises ValueError with a
    sentence a user can act on."""
    if not text:
        return Profile()
    family, _, version = text.partition("@")
    if family not in FAMILIES:
        raise ValueError(f"--profile takes lmstudio, lmstudio@<version> (such as lmstudio@0.3.29) or reference, "
                         f"not {text!r}")
    if family == "reference" and version:
        raise ValueError("--profile reference has no versions: it is lmconform's own server")
    try:
        return Profile(family, version_of(version) if version else None)
    except ValueError as error:
        raise ValueError(f"--profile {text}: {error} (plain lmstudio is its latest version)") from None
