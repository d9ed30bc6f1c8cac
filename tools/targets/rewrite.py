"""A real target's expected verdicts (fixtures/targets/*.toml) written again from a run, as `make expected-real` does:
what a person wrote stays, what the run decides is rewritten.

A row that still holds is kept as it is written, its reason and `model_dependent` mark with it; a row the run no
longer needs (its pair passes now, or it matches no verdict, unless the model decides it) is taken out; a wire fact
that came out otherwise gets the run's outcome, and a model-dependent row the run's outcome beside its others; a
verdict no row expects gets a row of its own, whose reason is PLACEHOLDER. Every change is listed, and each row with
a placeholder or an outcome that changed is one to read: tests/test_expectations.py fails while a placeholder is
left.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date

from lmconform.checks.evaluate import Verdict
from lmconform.expectations import Expectations, Expected
from lmconform.vocabulary import Outcome

# Set, the real servers' tests write each target's file again from their runs instead of comparing
# (`make expected-real`).
WRITE_EXPECTED = "LMCONFORM_WRITE_EXPECTED"
PLACEHOLDER = "TO FILL: why the server gives this verdict (written by make expected-real)"
NEW_ROWS = ("# Rows `make expected-real` added: each reason is to be written, saying why this is what the server "
            "does.")


@dataclass
class Block:
    """A row of the file as written, and the row it says; `text` None: the row is to be written anew."""

    entry: Expected
    text: str | None
    used: bool = False


def _blocks(text: str) -> tuple[list[str | int], list[str]]:
    """The file as its pieces: text that is no row (the header, comments, blank lines), and each `[[expected]]`
    block (its header line and the `key = value` lines under it), by its position among the rows."""
    pieces: list[str | int] = []
    rows: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if line.strip() == "[[expected]]":
            if current is not None:
                rows[-1] = "".join(current)
            current = [line]
            rows.append("")
            pieces.append(len(rows) - 1)
        elif current is not None and line.strip() and not line.lstrip().startswith(("#", "[")):
            current.append(line)
        else:
            if current is not None:
                rows[-1] = "".join(current)
                current = None
            pieces.append(line)
    if current is not None:
        rows[-1] = "".join(current)
    return pieces, rows


def _exact(entry: Expected) -> bool:
    """A row for one (case, check), no glob."""
    return not any(character in entry.check + entry.case for character in "*?[")


def row_text(entry: Expected) -> str:
    lines = ["[[expected]]", f"check = {json.dumps(entry.check)}", f"case = {json.dumps(entry.case)}"]
    ordered = sorted(entry.outcomes, key=list(Outcome).index)
    if entry.model_dependent:
        lines += ["model_dependent = true", f"outcomes = {json.dumps(ordered)}"]
    else:
        lines.append(f"outcome = {json.dumps(ordered[0])}")
    lines += [f"reason = {json.dumps(entry.reason, ensure_ascii=False)}",
              f"seen = {json.dumps(entry.seen, ensure_ascii=False)}"]
    return "\n".join(lines) + "\n"


def rewritten(text: str, expectations: Expectations, verdicts: Iterable[Verdict], seen: str) -> tuple[str, list[str]]:
    """The file `text` (whose rows are `expectations`) written again for `verdicts`, and what changed, a line each.
    `seen` says, for a new row, which server version and day gave the verdict."""
    pieces, rows = _blocks(text)
    assert len(rows) == len(expectations.entries), "every [[expected]] block is a row of the file"
    blocks = [Block(entry, row) for entry, row in zip(expectations.entries, rows)]
    changes: list[str] = []
    before: dict[int, list[Expected]] = {}  # rows to insert ahead of a glob row, which matches first otherwise
    added: list[Expected] = []
    for verdict in sorted(verdicts, key=lambda verdict: (verdict.case_id, verdict.check.id)):
        outcome, pair = str(verdict.outcome), f"{verdict.case_id} {verdict.check.id}"
        position = next((index for index, block in enumerate(blocks)
                         if block.entry.matches(verdict.case_id, verdict.check.id)), None)
        if position is None:
            if verdict.outcome is not Outcome.OK and not verdict.known_limit:  # the package knows that one
                added.append(Expected(verdict.check.id, verdict.case_id, frozenset({outcome}), PLACEHOLDER, seen))
                changes.append(f"new row, reason to write: {pair} {outcome}")
            continue
        block = blocks[position]
        block.used = True
        if block.entry.allows(outcome):
            continue
        if block.entry.model_dependent:
            block.entry = replace(block.entry, outcomes=block.entry.outcomes | {outcome})
            block.text = None
            changes.append(f"model-dependent row widened, read its reason again: {pair} also {outcome}")
        elif _exact(block.entry) and verdict.outcome is Outcome.OK:
            block.text = ""
            changes.append(f"row taken out, the pair passes now: {pair}")
        elif _exact(block.entry):
            block.entry = replace(block.entry, outcomes=frozenset({outcome}))
            block.text = None
            changes.append(f"outcome changed, read its reason again: {pair} now {outcome}")
        elif verdict.outcome is not Outcome.OK:
            before.setdefault(position, []).append(
                Expected(verdict.check.id, verdict.case_id, frozenset({outcome}), PLACEHOLDER, seen))
            changes.append(f"new row ahead of the glob row {block.entry.check} {block.entry.case}, reason to write: "
                           f"{pair} {outcome}")
        else:
            changes.append(f"the glob row {block.entry.check} {block.entry.case} fails to hold for {pair}, which "
                           f"passes: narrow it by hand")
    for block in blocks:
        if not block.used and not block.entry.model_dependent:  # what the model decides may leave no verdict
            block.text = ""
            changes.append(f"row taken out, it matches no verdict: {block.entry.check} {block.entry.case}")
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
            continue
        out += [row_text(entry) + "\n" for entry in before.get(piece, ())]
        block = blocks[piece]
        out.append(row_text(block.entry) if block.text is None else block.text)
    written = _squeezed("".join(out))
    if added:
        written = written.rstrip("\n") + f"\n\n{NEW_ROWS}\n" + "\n".join(row_text(entry) for entry in added)
    return written, changes


def _squeezed(text: str) -> str:
    """No more than one blank line in a row, where a row was taken out."""
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def seen_now(label: str, server_version: str | None) -> str:
    return f"{label} {server_version or ''}".strip() + f", {date.today().isoformat()}"


def placeholders(text: str) -> list[str]:
    """The rows of a file whose reason is still the placeholder: check and case of each."""
    pieces, rows = _blocks(text)
    return [" ".join(line.split("=", 1)[1].strip().strip('"') for line in row.splitlines()
                     if line.startswith(("check ", "case "))) for row in rows if json.dumps(PLACEHOLDER) in row]

