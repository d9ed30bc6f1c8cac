"""The bytes of a stream cut into TCP writes the ways a form asks: every multi-byte character split between two
writes, CRLF pairs split between the CR and the LF, writes of 1 to 64 bytes cutting lines anywhere, and a stretch
sent one byte per write. Without a write feature, each event (with what precedes it) is one write, as the plain
server sends it.

A write that ends where a reader must not yet have the next byte (inside a character, between CR and LF, in the
one-byte stretch) is marked to be followed by a pause, so that it reaches the reader as a TCP segment of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lmconform.reference.streams.form import Form

WRITE_FEATURES = frozenset({"split-utf8", "split-crlf", "split-anywhere", "one-byte-writes"})
_MULTI_BYTE = re.compile(rb"[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf7][\x80-\xbf]{3}")
_CRLF_CHANCE = 0.3
_ANYWHERE_SIZES = (1, 2, 3, 5, 8, 13, 21, 34, 64)
_ONE_BYTE_STRETCH = (8, 48)


@dataclass(frozen=True)
class Write:
    data: bytes
    pause: bool = False  # a reader must get it apart from the next write


@dataclass
class Cut:
    writes: list[Write]
    effects: set[str] = field(default_factory=set)
    shows: dict[str, str] = field(default_factory=dict)  # feature -> what it did, for the write features


def _sizes(sizes: set[int]) -> str:
    ordered = sorted(sizes)
    if len(ordered) == 1:
        return f"{ordered[0]}-byte"
    return ", ".join(f"{size}-" for size in ordered[:-1]) + f" and {ordered[-1]}-byte"


def cut_writes(blocks: list[bytes], form: Form) -> Cut:
    body = b"".join(blocks)
    cuts: dict[int, bool] = {}  # offset -> whether the write ending there is followed by a pause
    offset = 0
    for block in blocks:
        offset += len(block)
        cuts[offset] = False
    cut = Cut([])
    if form.has("split-utf8"):
        rng, sizes, count = form.rng("split-utf8"), set(), 0
        for char in _MULTI_BYTE.finditer(body):
            size = char.end() - char.start()
            cuts[char.start() + rng.randint(1, size - 1)] = True
            sizes.add(size)
            count += 1
        if count:
            cut.shows["split-utf8"] = (f"a {_sizes(sizes)} character split across writes" if count == 1
                                       else f"{_sizes(sizes)} characters split across writes")
    if form.has("split-crlf"):
        rng = form.rng("split-crlf")
        pairs = [match.start() + 1 for match in re.finditer(rb"\r\n", body)]
        chosen = [at for at in pairs if rng.random() < _CRLF_CHANCE] or pairs[:1]
        for at in chosen:
            cuts[at] = True
        if chosen:
            cut.shows["split-crlf"] = ("a CRLF pair split across writes" if len(chosen) == 1
                                       else f"{len(chosen)} CRLF pairs split across writes")
    if form.has("split-anywhere") and body:
        rng, at = form.rng("split-anywhere"), 0
        while at < len(body):
            at += rng.choice(_ANYWHERE_SIZES)
            cuts.setdefault(at, False)
        cut.shows["split-anywhere"] = "writes of 1 to 64 bytes cutting lines anywhere"
    if form.has("one-byte-writes") and body:
        rng = form.rng("one-byte-writes")
        start = rng.randrange(len(body))
        stretch = min(rng.randint(*_ONE_BYTE_STRETCH), len(body) - start)
        for at in range(start + 1, start + stretch + 1):
            cuts[at] = True
        cut.shows["one-byte-writes"] = f"{stretch} bytes sent one byte per write"
    cut.effects = set(cut.shows)
    previous = 0
    for at in sorted(cuts):
        if previous < at <= len(body):
            cut.writes.append(Write(body[previous:at], cuts[at]))
            previous = at
    if previous < len(body):
        cut.writes.append(Write(body[previous:]))
    return cut
