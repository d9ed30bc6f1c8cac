"""What the request schemas forbid, refused: after its own validation (LM Studio's words for what LM Studio
refuses), each door of the reference server refuses any request the request schema of its API, as the reference
profile reads it, finds at MUST or SHOULD — a value out of its range or enumeration, a string off its pattern, too
many items — so that the reference server refuses exactly what the schemas forbid (the negative mode's violations
are derived from the same schemas, lmconform.fuzz.derived). What the schemas grade INFO the spec leaves open: it is
accepted.
"""

from __future__ import annotations

import re
from typing import Any

from lmconform.reference.faults.registry import HTTP, flag
from lmconform.schemas import schema_for, schema_set
from lmconform.schemas.grading import SchemaFinding
from lmconform.vocabulary import Level

PROFILE = "reference"
REFUSED_LEVELS = (Level.MUST, Level.SHOULD)
BOUND_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})

BOUNDS_IGNORED = flag(
    "bounds-ignored", api=HTTP,
    summary="a request with a number out of its documented range (temperature 5, max_tokens 0 or -1, n 0) is "
            "answered 200 as if it were in range",
    seen_in="llama.cpp's server (temperature 5 accepted; max_tokens -1 unbounded, 0 one token) and LM Studio "
            "(max_tokens -1)", generated_only=True)


def schema_refusal(api: str, body: Any, faults: frozenset[str], let_through: str | None = None) -> SchemaFinding | None:
    """The first constraint of `api`'s request schema that `body` breaks and the server refuses, or None.
    `let_through` matches the places (JSON pointers) a fault of the door stops validating (an unknown role)."""
    # The first one ends the walk: a refusal names one.
    for finding in schema_set(PROFILE).iter_findings(schema_for(api, "request", body), body, REFUSED_LEVELS):
        if BOUNDS_IGNORED in faults and finding.keyword in BOUND_KEYWORDS:
            continue
        if let_through is None or not re.fullmatch(let_through, finding.pointer):
            return finding
    return None


def refusal_message(finding: SchemaFinding) -> str:
    """The refusal's words: where, and what the schema asks there."""
    where = finding.pointer.lstrip("/").replace("/", ".") or "the request body"
    return f"'{where}' must be {finding.expected} (got {finding.actual})"
