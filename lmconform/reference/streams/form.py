"""A wire form: which legal-but-unusual ways of writing a stream an answer uses, and the seed of every detail.

A form is `SEED` (the features the seed picks) or `SEED:FEATURE,FEATURE` (exactly those; `SEED:plain` for none).
Each feature draws its details (where a write is cut, which keys move) from a random generator of its own, keyed by
the seed and the feature's name, so that turning one feature off leaves what the others do unchanged: that is what
lets a finding shrink to the few features that cause it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from lmconform.api_table import api_of


@dataclass(frozen=True)
class Feature:
    name: str
    shows: str  # how a cause reads: "CRLF line ends"
    group: str | None = None  # at most one feature of a group: the line ends


FEATURES: dict[str, Feature] = {feature.name: feature for feature in (
    Feature("crlf", "CRLF line ends", group="line-ends"),
    Feature("cr", "CR line ends", group="line-ends"),
    Feature("mixed-line-ends", "LF, CRLF and CR line ends mixed", group="line-ends"),
    Feature("no-space", "`data:` without the space"),
    Feature("comments", "comment lines in and between events"),
    Feature("keep-alives", "keep-alive comment blocks and blank lines between events"),
    Feature("event-lines", "`event: message` lines"),
    Feature("no-event-lines", "no `event:` lines"),
    Feature("event-after-data", "`event:` lines after the `data:` lines"),
    Feature("ids", "`id:` lines"),
    Feature("retry", "`retry:` lines"),
    Feature("multiline-data", "the JSON split across several `data:` lines"),
    Feature("split-utf8", "multi-byte characters split across writes"),
    Feature("split-crlf", "a CRLF pair split across writes"),
    Feature("split-anywhere", "writes of 1 to 64 bytes cutting lines anywhere"),
    Feature("one-byte-writes", "a stretch of the body sent one byte per write"),
    Feature("fragments", "deltas from one character to the whole string"),
    Feature("empty-deltas", "empty-content deltas"),
    Feature("reasoning-content", "reasoning in `reasoning_content`"),
    Feature("usage-null", "`usage: null` on every chunk"),
    Feature("extra-keys", "unknown extra keys"),
    Feature("key-order", "keys in any order"),
    Feature("json-space", "whitespace inside the JSON"),
    Feature("unicode-escapes", "non-ASCII characters as \\u escapes"),
    # Of the transport under the stream: only when a form names them, never picked by a seed alone.
    Feature("drip", "the first 3 bytes one per write, 100 ms apart"),
    Feature("gzip", "gzip Content-Encoding"),
    Feature("close-delimited", "an HTTP/1.0 body that ends when the connection closes"),
)}
TRANSPORT = ("drip", "gzip", "close-delimited")
LINE_ENDS = tuple(name for name, feature in FEATURES.items() if feature.group == "line-ends")
PLAIN = "plain"
_FORM = re.compile(r"(\d{1,18})(?::([a-z0-9,-]+))?")
SEED_PICKS = 0.4  # the chance a seed alone turns a feature on


def features_of(api: str) -> tuple[str, ...]:
    """The features the streams of `api` can take, as its folder's reference/streams.py lists them (none when the
    reference server writes its streams in no generated form), in the catalogue's order."""
    module = api_of(api).room("reference.streams")
    return tuple(name for name in FEATURES if module is not None and name in module.FEATURES)


@dataclass(frozen=True)
class Form:
    seed: int
    features: frozenset[str]

    def __post_init__(self) -> None:
        unknown = sorted(self.features - set(FEATURES))
        if unknown:
            raise ValueError(f"no stream feature is called {', '.join(unknown)}; known: {', '.join(FEATURES)}")
        if len(self.features & set(LINE_ENDS)) > 1:
            raise ValueError(f"at most one of {', '.join(LINE_ENDS)}")

    @classmethod
    def from_seed(cls, seed: int) -> Form:
        """The features a seed picks by itself: each but those of the transport with a chance of SEED_PICKS, and one
        kind of line end or none."""
        rng = random.Random(f"{seed}/features")
        chosen = {name for name in FEATURES if name not in (*LINE_ENDS, *TRANSPORT) and rng.random() < SEED_PICKS}
        line_end = rng.choice((None, *LINE_ENDS))
        return cls(seed, frozenset(chosen | ({line_end} if line_end else set())))

    def has(self, feature: str) -> bool:
        return feature in self.features

    def rng(self, feature: str) -> random.Random:
        """The details of one feature: the same whatever other features are on."""
        return random.Random(f"{self.seed}/{feature}")

    def without(self, feature: str) -> Form:
        return Form(self.seed, self.features - {feature})

    def ordered(self) -> list[str]:
        return [name for name in FEATURES if name in self.features]

    def __str__(self) -> str:
        return f"{self.seed}:{','.join(self.ordered()) or PLAIN}"


def parse_form(text: str) -> Form:
    """`1234` (the seed's own features), `1234:crlf,split-utf8` or `1234:plain`; ValueError with the reason."""
    match = _FORM.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"a stream form is SEED or SEED:FEATURE,FEATURE (or SEED:{PLAIN}), not {text!r}")
    seed, listed = int(match[1]), match[2]
    if listed is None:
        return Form.from_seed(seed)
    names = frozenset(listed.split(",")) - {PLAIN, ""}
    return Form(seed, names)
