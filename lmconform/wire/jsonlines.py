"""Newline-delimited JSON as a process writes it, read line by line the way a client of a JSON-RPC bridge reads it,
and with every framing error kept rather than forgiven.

Each stdout line should be one JSON document. A line that is not JSON is kept as garbage, except when it is the
start of a document the next lines complete (a pretty-printer's `{` … `}`): that is kept as one message *split*
over its lines, so that a check can say "a message was split over 12 lines" and the others can still read what it
said. Blank lines carry nothing and are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

STDIN, STDOUT, STDERR = "stdin", "stdout", "stderr"
# How far a split message is followed before its lines are taken for garbage.
MAX_SPLIT_LINES = 256
MAX_SPLIT_BYTES = 1 << 20


@dataclass(frozen=True)
class Line:
    """One line of one stream: `at` is seconds since the process started, `data` the bytes without the newline."""

    index: int  # its position in the process's transcript, all streams together
    at: float
    stream: str  # STDIN (written by lmconform), STDOUT or STDERR (written by the process)
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 400 else self.text[:400] + "…"
        return f"{self.stream} line #{self.index} at {self.at:.3f} s: {shown}"


@dataclass(frozen=True)
class Message:
    """A JSON document read from stdout: from one line, or (a framing error) from several."""

    lines: tuple[Line, ...]
    value: Any

    @property
    def at(self) -> float:
        return self.lines[-1].at

    @property
    def split(self) -> bool:
        return len(self.lines) > 1

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def __str__(self) -> str:
        first = self.lines[0]
        where = f"stdout line #{first.index}" + (f" (and {len(self.lines) - 1} more)" if self.split else "")
        text = json.dumps(self.value, ensure_ascii=False) if self.split else first.text
        return f"{where} at {self.at:.3f} s: {text if len(text) <= 400 else text[:400] + '…'}"


class _NotJson(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes) -> Any:
    """The JSON document `data` holds; _NotJson when it holds none (NaN and Infinity are not JSON)."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _NotJson from None


class JsonLines:
    """Fed stdout lines in order, keeps the messages and the garbage they make."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.garbage: list[Line] = []
        self._pending: list[Line] = []

    def feed(self, line: Line) -> Message | None:
        """The message this line completes, if any."""
        if not line.data.strip():
            if self._pending:
                self._pending.append(line)
            return None
        if self._pending:
            lines = [*self._pending, line]
            try:
                return self._message(tuple(lines), parse_json(b"\n".join(item.data for item in lines)))
            except _NotJson:
                pass
            alone = self._alone(line)
            if alone is not None:  # the pending lines never became a message: they were garbage
                self._give_up()
                return self._message((line,), alone)
            self._pending.append(line)
            if len(self._pending) > MAX_SPLIT_LINES or sum(len(item.data) for item in self._pending) > MAX_SPLIT_BYTES:
                self._give_up()
            return None
        try:
            return self._message((line,), parse_json(line.data))
        except _NotJson:
            pass
        if line.data.lstrip()[:1] in (b"{", b"["):
            self._pending = [line]  # perhaps the first line of a document written over several
        else:
            self.garbage.append(line)
        return None

    def finish(self) -> None:
        """The stream ended: lines still waiting for the rest of a document were garbage."""
        self._give_up()

    @staticmethod
    def _alone(line: Line) -> Any:
        """The line's own JSON object, when it is a complete message by itself (a string or number alone, inside
        a split document, is one of its lines)."""
        try:
            value = parse_json(line.data)
        except _NotJson:
            return None
        return value if isinstance(value, dict) else None

    def _give_up(self) -> None:
        self.garbage.extend(line for line in self._pending if line.data.strip())
        self._pending = []

    def _message(self, lines: tuple[Line, ...], value: Any) -> Message:
        self._pending = []
        message = Message(lines, value)
        self.messages.append(message)
        return message
