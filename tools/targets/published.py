"""What the project publishes about the real servers its tests run: the compatibility matrix (docs/compatibility.md
and .html) and the shape of every answer per server version (fixtures/snapshots/<server>-<version>/).

Both are made from the runs tests/test_real_targets.py makes anyway, and compared with what is committed there:
`make matrix-real` and `make snapshots-real` write them instead (LMCONFORM_WRITE_COMPATIBILITY=1,
LMCONFORM_WRITE_SNAPSHOTS=1).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.run import Run
from lmconform.snapshots import shape_of, snapshot_folder
from lmconform.snapshots.diff import shape_diff
from lmconform.snapshots.extension import ShapeSnapshotExtension
from lmconform.verdicts.records import results_of

ROOT = Path(__file__).resolve().parent.parent.parent
COMPATIBILITY_MD = ROOT / "docs" / "compatibility.md"
COMPATIBILITY_HTML = ROOT / "docs" / "compatibility.html"
SNAPSHOTS = ROOT / "fixtures" / "snapshots"
WRITE_COMPATIBILITY = "LMCONFORM_WRITE_COMPATIBILITY"
WRITE_SNAPSHOTS = "LMCONFORM_WRITE_SNAPSHOTS"
TITLE = "What lmconform says about real servers"
INTRO = """\
Each column is a server `make test` runs (tests/test_real_targets.py), named with its exact version: \
llama-cpp-python's server and llama.cpp's `llama-server`, both with Gemma 3 270M at temperature 0 and at most 64 \
output tokens, on the same pinned CPU code on every machine; the LiteLLM proxy in front of the reference server \
and of `llama-server`; and lmconform's own reference server as the baseline. Each cell is a check's verdict on \
that server over the cases that exercised it; every verdict that is not OK comes with its reason, kept with the \
server's expected verdicts in `fixtures/targets/<server>.toml`.

A verdict marked ≈ is decided by the model, not by the server (arguments cut at the token limit, text where a \
call was hoped for): what a 270M model happened to say is no property of the server, and it may differ on \
other CPU code, so the page shows the outcomes such a verdict may take rather than the one it took, and comes \
out the same on every machine. `make matrix-real` writes this page; `make test` fails when it no longer \
matches what the servers do."""


def compatibility_pages(records: list[tuple[str, dict]]) -> tuple[str, str]:
    """(Markdown, HTML) of the published matrix, from (name, results record) in column order."""
    matrix = build_matrix([results_of(record, Path(f"{name}.json")) for name, record in records], stable=True)
    return (render_markdown(matrix, TITLE, INTRO.replace("\\\n", "")),
            render_html(matrix, TITLE, "".join(f"<p>{paragraph}</p>" for paragraph in _html_paragraphs())))


def _html_paragraphs() -> list[str]:
    import html
    import re

    text = INTRO.replace("\\\n", "")
    return [re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(paragraph, quote=False))
            for paragraph in text.split("\n\n")]


def page_difference(committed: Path, produced: str, lines: int = 80) -> str:
    """A unified diff of a committed page and the one the runs produce, cut to `lines` lines; "" when equal."""
    old = committed.read_text(encoding="utf-8") if committed.is_file() else ""
    if old == produced:
        return ""
    diff = list(difflib.unified_diff(old.splitlines(), produced.splitlines(), str(committed.relative_to(ROOT)),
                                     "what the real servers do now", lineterm="", n=1))
    return "\n".join(diff[:lines] + ([f"… {len(diff) - lines} more lines"] if len(diff) > lines else []))


# --- shapes ---------------------------------------------------------------------------------------------------------

def serialized_shapes(run: Run) -> dict[str, str]:
    """Case id -> the shape of its answer, as `pytest suites --snapshot-update` would store it. A coding agent's
    case has none: which of its requests comes first, and how far the server got with it, is the agent's timing (its
    retries, its title request, a keep-alive comment the server sent while it waited), and every API it speaks has
    cases of its own whose shapes are stored."""
    extension = ShapeSnapshotExtension()
    return {case_id: extension.serialize(shape_of(observed.exchange, observed.case.api))
            for case_id, observed in sorted(run.observations().items())
            if not observed.case.source and observed.agent_run is None}


def stored_shapes(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).with_suffix("").as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(folder.glob("*/*.json"))}


def _found_anywhere(shape_text: str, holds: Callable[[dict], bool]) -> bool:
    """Whether any object of a shape, at any depth, is one `holds` is true of."""

    def found(value: Any) -> bool:
        if isinstance(value, dict):
            return holds(value) or any(found(item) for item in value.values())
        if isinstance(value, list):
            return any(found(item) for item in value)
        return False

    return found(json.loads(shape_text))


def calls_a_tool(shape_text: str) -> bool:
    """Whether the answer a shape describes calls a tool (chat `tool_calls`, a Responses `function_call` item, a
    Messages `tool_use` block): the model's choice, where a case lets it choose."""
    return _found_anywhere(shape_text, lambda member: member.get("type") in ("function_call", "tool_use")
                           or bool(member.get("tool_calls")))


# How each API says an answer stopped at the request's token limit rather than ending by itself: chat's and text
# completions' finish_reason, Messages' stop_reason, a Responses response or item left incomplete.
TOKEN_LIMIT_STOPS = (("finish_reason", "length"), ("stop_reason", "max_tokens"), ("status", "incomplete"))


def cut_at_the_token_limit(shape_text: str) -> bool:
    """Whether the answer a shape describes was cut at the token limit: the model's choice too, since it is the model
    that ends an answer or goes on. llama-server's answers to the same request vary with what its prompt cache holds,
    and one run's answer calls a tool and ends where another's calls it and goes on past the limit."""
    return _found_anywhere(shape_text, lambda member: any(member.get(key) == value for key, value in TOKEN_LIMIT_STOPS))


def model_choices(shape_text: str) -> tuple[bool, bool]:
    """What the model chose in the answer a shape describes: to call a tool or not, to end before the limit or not."""
    return calls_a_tool(shape_text), cut_at_the_token_limit(shape_text)


# Usage counts of a server's prompt cache. Whether they come depends on what earlier requests left in the cache, so on
# the order the run's cases reached the server: LiteLLM adds `cache_read_input_tokens` to a Messages answer's usage
# when llama-server reports cached prompt tokens, and not otherwise.
CACHE_COUNTS = frozenset({"cache_read_input_tokens", "cache_creation_input_tokens"})


def without_cache_counts(shape_text: str) -> Any:
    """The shape with every prompt-cache count left out, for comparing what the server's format is."""

    def kept(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: kept(item) for key, item in value.items() if key not in CACHE_COUNTS}
        if isinstance(value, list):
            return [kept(item) for item in value]
        return value

    return kept(json.loads(shape_text))


@dataclass
class ShapeComparison:
    folder: Path
    server_changed: list[str] = field(default_factory=list)  # readable diffs of what the server sends
    model_chose_otherwise: list[str] = field(default_factory=list)  # cases whose tool call or cut came or went
    cache_differed: list[str] = field(default_factory=list)  # cases whose prompt-cache counts came or went
    added: list[str] = field(default_factory=list)  # cases without a stored shape
    removed: list[str] = field(default_factory=list)  # stored shapes of cases no longer played
    previous: Path | None = None  # for a version without snapshots: the newest folder of the same server

    @property
    def holds(self) -> bool:
        return not (self.server_changed or self.added or self.removed)

    def report(self) -> str:
        name = self.folder.relative_to(ROOT) if self.folder.is_relative_to(ROOT) else self.folder
        lines = []
        if self.previous is not None:
            lines.append(f"no snapshots for this version at {name}; compared with {self.previous.name}, "
                         "another version of the same server (`make snapshots-real` records this one):")
        lines += self.server_changed
        lines += [f"no stored shape for {case} (`make snapshots-real` records it)" for case in self.added]
        lines += [f"a stored shape of {case}, which the run no longer played" for case in self.removed]
        lines += [f"{case}: the model chose otherwise than when the snapshot was taken (a tool call where it had "
                  "text or text where it called, or an answer cut at the token limit where it ended, or the other way "
                  "round): the server's format of this case is not compared"
                  for case in self.model_chose_otherwise]
        lines += [f"{case}: prompt-cache counts in its usage came or went (what earlier requests left in the server's "
                  "cache); the rest of its shape is the same" for case in self.cache_differed]
        return "\n".join(lines)


def compare_shapes(run: Run, root: Path = SNAPSHOTS, write: bool = False) -> ShapeComparison:
    """The run's shapes against `<root>/<server>-<version>/`; with `write`, stored there instead. A folder for
    another version of the same server stands in when this version has none, so an upgrade shows as a diff."""
    folder = snapshot_folder(run.target, root)
    produced = serialized_shapes(run)
    comparison = ShapeComparison(folder)
    if write:
        for case_id, text in produced.items():
            path = folder / f"{case_id}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for case_id in stored_shapes(folder).keys() - produced.keys():
            (folder / f"{case_id}.json").unlink()
        return comparison
    against = folder
    if not folder.is_dir():
        prefix = snapshot_folder(replace(run.target, server_version="0"), root).name[:-1]  # `llama-server-`
        others = sorted(path for path in root.glob(f"{prefix}*")
                        if path.is_dir() and path.name[len(prefix):][:1].isdigit())
        comparison.previous = against = others[-1] if others else folder
    stored = stored_shapes(against) if against.is_dir() else {}
    comparison.added = sorted(produced.keys() - stored.keys())
    comparison.removed = sorted(stored.keys() - produced.keys())
    for case_id in sorted(produced.keys() & stored.keys()):
        old, new = stored[case_id], produced[case_id]
        if old == new:
            continue
        if model_choices(old) != model_choices(new):
            comparison.model_chose_otherwise.append(case_id)
        elif without_cache_counts(old) == without_cache_counts(new):
            comparison.cache_differed.append(case_id)
        else:
            comparison.server_changed.append(shape_diff(old, new, f"{against.name}/{case_id}.json",
                                                        f"{folder.name}/{case_id}.json (this run)"))
    if comparison.previous is not None and comparison.previous == folder:
        comparison.previous = None  # no version of this server has snapshots yet
    elif comparison.previous is not None and not comparison.server_changed and not comparison.added:
        comparison.added = sorted(produced)  # the same shapes, but this version's are still to be recorded
    return comparison
