"""The target of a run described in sentences: what kind of server it is, which version, which engine and model,
where it answered, how it was built and run, and the evidence behind the fingerprint. Every report that names a
target uses these words; none shows a field that is missing as "None" or a structure as its Python form."""

from __future__ import annotations

import html
from dataclasses import dataclass

from lmconform.verdicts.records import RunTarget

KIND_NAMES = {
    "reference": "lmconform's reference server (LM Studio-like)",
    "lmstudio": "LM Studio",
    "llama.cpp": "llama.cpp",
    "litellm": "the LiteLLM proxy",
    "ollama": "Ollama",
    "vllm": "vLLM",
    "unknown": "a server lmconform does not recognise",
}
PROFILES = {
    "reference": "held to the OpenAI spec, LM Studio's exact answers and the reference server's own behaviour",
    "lmstudio": "held to the OpenAI spec and LM Studio's exact answers (--profile lmstudio)",
}
DEFAULT_PROFILE = "held to the OpenAI spec and to what real clients need"
# How a server was built and run, where that decides what it computes (the real servers' `build` entry).
BUILD_NAMES = {"cpu_variant": "ggml CPU code", "pinned": "CPU code pinned", "threads": "threads",
               "cmake_args": "CMake flags", "system_info": "llama.cpp system info"}


@dataclass(frozen=True)
class TargetProse:
    sentence: str  # who answered, at which address, with which model
    version: str  # the exact version, as given or as the fingerprint found it; "" when unknown
    facts: tuple[tuple[str, str], ...]  # (what, said) pairs: version, engine, profile, build, in words
    evidence: tuple[str, ...]  # why the fingerprint says what it says

    @property
    def text(self) -> str:
        return " ".join([self.sentence, *(f"{name}: {said}." for name, said in self.facts)])


def words(value: object) -> str:
    """A value from a record in words: yes/no, lists joined, nothing for a missing value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(filter(None, map(words, value)))
    if isinstance(value, dict):
        return "; ".join(f"{name.replace('_', ' ')} {words(item)}" for name, item in value.items() if words(item))
    return str(value)


def bracket_words(bracket: str) -> str:
    """`==b11669` → `b11669`; `>=0.3.29,<0.4.0` → `0.3.29 or later, before 0.4.0`."""
    parts = []
    for part in filter(None, bracket.split(",")):
        if part.startswith("=="):
            parts.append(part[2:])
        elif part.startswith(">="):
            parts.append(f"{part[2:]} or later")
        elif part.startswith("<"):
            parts.append(f"before {part[1:]}")
        else:
            parts.append(part)
    return ", ".join(parts)


def exact_version(target: RunTarget) -> str:
    """The server's version as exactly as the record knows it: given (--server-version), else the fingerprint's
    exact bracket, else lmconform's own for the reference server."""
    if target.server_version:
        return target.server_version
    bracket = words(target.fingerprint.get("version_bracket"))
    if bracket.startswith("==") and "," not in bracket:
        return bracket[2:]
    if target.fingerprint.get("kind") == "reference" and target.lmconform:
        return f"lmconform {target.lmconform}"
    return ""


def kind_name(target: RunTarget) -> str:
    """What kind of server the fingerprint found, in words."""
    kind = words(target.fingerprint.get("kind"))
    return KIND_NAMES.get(kind, kind) if kind else "a server that was not fingerprinted"


def build_words(target: RunTarget) -> str:
    """How the server was built and run, where the record says (the real servers' pinned CPU code)."""
    build = target.fingerprint.get("build")
    if not isinstance(build, dict):
        return ""
    return "; ".join(f"{BUILD_NAMES.get(name, name.replace('_', ' '))} {words(value)}"
                     for name, value in build.items() if words(value))


def describe(target: RunTarget) -> TargetProse:
    fingerprint = target.fingerprint
    what = kind_name(target)
    version = exact_version(target)
    subject = target.subject
    sentence = f"{'The target' if subject == 'the target' else subject} is {what}"
    sentence += f", version {version}" if version else ""
    sentence += f", at {target.url}" if target.url else ""
    sentence += f", serving the model {target.model}." if target.model else ", with no model named."
    facts: list[tuple[str, str]] = []
    bracket = words(fingerprint.get("version_bracket"))
    if bracket and bracket_words(bracket) != version:
        facts.append(("Version the fingerprint brackets", bracket_words(bracket)))
    if not version and not bracket:
        facts.append(("Version", "unknown: the server publishes none; --server-version names it"))
    if words(fingerprint.get("engine")):
        facts.append(("Engine", words(fingerprint.get("engine"))))
    facts.append(("Checked as", PROFILES.get(target.profile, DEFAULT_PROFILE)))
    if target.bridge:
        facts.append(("VS Code bridge", words(target.bridge)))
    if build_words(target):
        facts.append(("Built and run with", build_words(target)))
    evidence = fingerprint.get("evidence")
    return TargetProse(sentence, version, tuple(facts),
                       tuple(words(item) for item in evidence) if isinstance(evidence, list) else ())


def target_html(target: RunTarget) -> str:
    """The target block of the run report: a paragraph, the facts, and the evidence as a list."""
    e = html.escape
    prose = describe(target)
    parts = ['<section class="lmc-target" id="target">', "<h2>The target</h2>", f"<p>{e(prose.sentence)}</p>"]
    if prose.facts:
        parts.append("<ul>" + "".join(f"<li><b>{e(name)}</b>: {e(said)}</li>" for name, said in prose.facts) + "</ul>")
    if prose.evidence:
        parts.append("<p>The fingerprint rests on what the server answered:</p><ul class=\"lmc-evidence\">"
                     + "".join(f"<li><code>{e(item)}</code></li>" for item in prose.evidence) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)
