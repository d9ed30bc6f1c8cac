"""Is a proxy transparent? Generated answers of lmconform's reference server (the `streams` source) sent through
the proxy and straight to the server: every difference the client would see, and every check the proxy's stream
fails that the server's does not, shrunk to the smallest wire form that causes it.

The result is a row per finding (the API, what goes wrong, the features of the smallest form, how many examples
showed it, the command that replays it through the proxy), and the features the proxy preserved: those that took
effect in some example and are part of no finding's cause. A finding that needs no feature at all goes wrong
whatever the framing: the proxy does it to plain streams too.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from lmconform.api_table import APIS
from lmconform.cases import load_cases
from lmconform.checks.registry import REGISTRY
from lmconform.expectations import ExpectationError
from lmconform.fuzz import streams
from lmconform.reference.streams import FEATURES, PLAIN_SHOWS
from lmconform.run.play import play
from lmconform.target import Target
from lmconform.vocabulary import Requirement

ROW_KEYS = {"api", "features", "findings", "reason"}


@dataclass(frozen=True)
class StreamRow:
    """What goes wrong through the proxy with the smallest form found for it."""

    api: str
    features: tuple[str, ...]  # of the smallest form; none: whatever the framing
    findings: tuple[str, ...]  # check ids, with the part of the generation for proxy.diff.generation_preserved
    cause: str = ""
    examples: int = 0  # how many examples it accounts for
    replay: str = ""  # the request that replays it through the proxy
    reason: str = ""

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        return (self.api, tuple(sorted(self.features)))


@dataclass(frozen=True)
class StreamFuzz:
    seed: int
    examples: int
    rows: tuple[StreamRow, ...]
    preserved: frozenset[str]  # features that took effect and caused nothing
    played: int = 0


def source_case(api: str):
    return next(case for case in load_cases(api) if case.source == streams.SOURCE)


def stream_apis() -> tuple[str, ...]:
    """The APIs whose answers the reference server writes in generated forms: those with a case of the streams
    source, in the table's order."""
    return tuple(api for api in APIS if any(case.source == streams.SOURCE for case in load_cases(api)))


def _rows(api: str, found: streams.Search) -> list[StreamRow]:
    """A row per set of features: the same cause found again under another seed is the same row."""
    by_features: dict[frozenset[str], list[streams.Finding]] = {}
    for finding in found.findings:
        by_features.setdefault(finding.form.features, []).append(finding)
    rows = []
    for findings in by_features.values():
        first = findings[0]
        count = sum(found.examples_of.get(name, 0) for name in {str(finding.form) for finding in findings})
        rows.append(StreamRow(api, tuple(first.form.ordered()), tuple(sorted({f.key for f in findings})), first.cause,
                              count, first.observed.exchange.request.reproduction()))
    return rows


def fuzz_streams(proxy: Target, upstream: Target, examples: int, seed: int = 0,
                 apis: tuple[str, ...] | None = None) -> StreamFuzz:
    """`examples` generated answers in all, shared between `apis` (by default every API with a streams source),
    through `proxy` and straight to `upstream`."""
    apis = stream_apis() if apis is None else apis
    checks = [check for check in REGISTRY.values() if check.requires <= {Requirement.UPSTREAM}]
    findings_of = streams.findings_by(checks)
    rows: list[StreamRow] = []
    took_effect: set[str] = set()
    played = 0
    for position, api in enumerate(apis):
        share = examples // len(apis) + (position < examples % len(apis))
        found = streams.search(source_case(api), lambda case: play(case, proxy, upstream), findings_of, share, seed)
        played += len(found.played)
        for observed in found.played:
            form = streams.played_form(observed)
            took_effect |= form.features if form else set()
        rows += _rows(api, found)
    caused = {feature for row in rows for feature in row.features}
    return StreamFuzz(seed, examples, tuple(rows), frozenset(took_effect - caused), played)


def serves_forms(upstream: Target) -> bool:
    """Whether the upstream answers a request that names a form in that form: lmconform's reference server does."""
    api = stream_apis()[0]
    answer = play(streams.as_case(source_case(api), streams.drawn(api, 1)[0], 0), upstream)
    return streams.played_form(answer) is not None


def _features(names) -> str:
    return " + ".join(f"`{name}`" for name in names) or "none"


def stream_table(result: StreamFuzz) -> str:
    """The rows as Markdown: a proxy project's statement of what it does to legal but unusual streams."""
    lines = [f"{result.played} generated answers (seed {result.seed}) through the proxy and straight to the upstream.",
             "", "| API | smallest framing that causes it | what goes wrong through the proxy | examples |",
             "|---|---|---|---|"]
    for row in sorted(result.rows, key=lambda row: row.key):
        cause = f"{_features(row.features)}: {row.cause}" if row.features else f"none: {PLAIN_SHOWS}"
        lines.append(f"| {row.api} | {cause} | {', '.join(f'`{key}`' for key in row.findings)} | {row.examples} |")
    if not result.rows:
        lines.append("| - | - | nothing | - |")
    lines += ["", f"Preserved: {', '.join(f'`{name}`' for name in FEATURES if name in result.preserved) or 'none'}"]
    return "\n".join(lines)


def findings_text(result: StreamFuzz) -> str:
    """Each finding with its cause and the command that replays exactly that answer through the proxy."""
    blocks = []
    for row in sorted(result.rows, key=lambda row: row.key):
        cause = row.cause if row.features else f"{PLAIN_SHOWS}: it goes wrong whatever the framing"
        blocks.append(f"[{row.api}] {cause}\n  Goes wrong: {', '.join(row.findings)}\n  Replay: {row.replay}")
    return "\n\n".join(blocks)


def toml_strings(values) -> str:
    """A TOML array of strings, on one line."""
    return "[" + ", ".join(json.dumps(value, ensure_ascii=False) for value in values) + "]"


def stream_toml(result: StreamFuzz) -> str:
    """The result as a gate file's `[stream_fuzz]` section, to keep as the expected rows (each reason to write)."""
    lines = ["[stream_fuzz]", f"seed = {result.seed}", f"examples = {result.examples}",
             f"preserved = {toml_strings(name for name in FEATURES if name in result.preserved)}"]
    for row in sorted(result.rows, key=lambda row: row.key):
        lines += ["", "[[stream_fuzz.changed]]", f"api = {json.dumps(row.api)}",
                  f"features = {toml_strings(row.features)}", f"findings = {toml_strings(row.findings)}",
                  f"reason = {json.dumps(row.reason or 'what the proxy does: ' + row.cause, ensure_ascii=False)}"]
    return "\n".join(lines) + "\n"


def load_expected(path: Path) -> StreamFuzz | None:
    """The `[stream_fuzz]` section of a gate file (fixtures/gates/*.toml), or None when it has none."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ExpectationError(f"{path}: {error}") from error
    section = data.get("stream_fuzz")
    if section is None:
        return None
    rows = []
    for raw in section.get("changed", []):
        unknown = set(raw) - ROW_KEYS
        if unknown or not {"api", "findings"} <= set(raw):
            problem = ", ".join(sorted(unknown)) or "no api or findings"
            raise ExpectationError(f"{path}: a [[stream_fuzz.changed]] row has {problem}")
        _known_features(path, raw.get("features", []))
        rows.append(StreamRow(raw["api"], tuple(raw.get("features", [])), tuple(sorted(raw["findings"])),
                              reason=raw.get("reason", "")))
    preserved = frozenset(section.get("preserved", []))
    _known_features(path, preserved)
    return StreamFuzz(int(section.get("seed", 0)), int(section.get("examples", 0)), tuple(rows), preserved)


def _known_features(path: Path, names) -> None:
    typos = sorted(set(names) - set(FEATURES))
    if typos:
        raise ExpectationError(f"{path}: no stream feature is called {', '.join(typos)}")


def _covering(row: StreamRow, expected: StreamFuzz) -> StreamRow | None:
    """The expected row of the same API with the most features, all of them in the found row's form: a shrink that
    stopped at a larger form (where a write is cut depends on every byte and on timing) is the same cause."""
    rows = [want for want in expected.rows if want.api == row.api and set(want.features) <= set(row.features)]
    return max(rows, key=lambda want: len(want.features), default=None)


def stream_differences(found: StreamFuzz, expected: StreamFuzz) -> list[str]:
    """Every way the rows and the preserved features differ from the expected ones, a line each. A found row
    belongs to the expected row it covers (lmconform.run.transparency._covering) and may show fewer of its
    findings, not others; every expected row must be found. A feature the file lists neither as preserved nor in a
    row, found preserved, is a difference too: the file is out of date."""
    lines: list[str] = []
    covered: set[tuple[str, tuple[str, ...]]] = set()
    for row in sorted(found.rows, key=lambda row: row.key):
        want = _covering(row, expected)
        if want is None:
            lines.append(f"{row.api} with {_features(row.features)}: not in the expected rows ({', '.join(row.findings)})")
            continue
        covered.add(want.key)
        extra = sorted(set(row.findings) - set(want.findings))
        if extra:
            lines.append(f"{row.api} with {_features(row.features)}: also {', '.join(extra)}")
    lines += [f"{api} with {_features(features)}: expected, not found"
              for api, features in sorted({want.key for want in expected.rows} - covered)]
    named = {name for want in expected.rows for name in want.features}
    lines += [f"preserved also `{name}`" for name in sorted(found.preserved - expected.preserved - named)]
    return lines
