"""Invalid requests derived from the request schemas: for each constraint (lmconform.schemas.constraints), a
violation that takes a valid body and breaks exactly that constraint — a value below the minimum or above the
maximum, outside the enumeration, of another JSON type, a required member left out, a member a closed object does
not define, a string off the pattern, one item too many or too few.

"Exactly" is checked, not hoped for: a drawn body is kept only when the schemas (as the target's profile reads them)
find that constraint failing and nothing else, so a value a profile allows (LM Studio's `max_tokens: -1`) is never
sent as a violation to a server that documents it. A constraint graded INFO yields a violation too, listed with the
others, but the negative mode does not send it: a server may accept it (docs/schemas.md, "Levels").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import assume, reject
from hypothesis import strategies as st

from lmconform.api_table import api_of
from lmconform.schemas import schema_set
from lmconform.schemas.constraints import ANY_ITEM, NEW_MEMBER, Constraint, constraints
from lmconform.schemas.grading import SchemaFinding
from lmconform.vocabulary import Level

SENT_LEVELS = (Level.MUST, Level.SHOULD)  # what the negative mode sends; an INFO constraint a server may ignore
UNEXPECTED_MEMBER = "lmconform_unexpected"
BOUND_SPAN = 1000  # how far past a bound a value is drawn: far enough to be plainly out, near enough to be realistic
FAMILIES = {
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), "range"),
    **dict.fromkeys(("enum", "const", "pattern", "minLength", "maxLength"), "value"),
    "type": "type", "required": "member", "additionalProperties": "member",
    **dict.fromkeys(("minItems", "maxItems", "maxProperties"), "count"),
}
WRONG_VALUES = {"integer": 7, "number": 1.5, "boolean": True, "string": "text", "array": ["a list"],
                "object": {"an": "object"}, "null": None}
# Strings that break a pattern: empty, spaced, too long, accented, punctuated, another prefix.
OFF_PATTERN = ("", " ", "has space", "dot.name", "é", "x" * 200, "a/b", "chat_1", "http://example.com/a.png", "$")
OFF_ENUM = ("", "unknown", "x-other", "None")


@dataclass(frozen=True)
class SchemaViolation:
    """A violation (lmconform.fuzz.violations) of one constraint, as the schemas of `profile` read it."""

    constraint: Constraint
    profile: str | None = None

    @property
    def name(self) -> str:
        return self.constraint.name

    def __repr__(self) -> str:
        return f"<violation: {self.name}>"

    @property
    def family(self) -> str:
        """Its kind of constraint, the negative mode's budget shared between kinds: a range, an allowed value, a
        JSON type, a member present or absent, a count."""
        return FAMILIES[self.constraint.keyword]

    @property
    def level(self) -> Level:
        return self.constraint.level

    @property
    def omit(self) -> frozenset[str]:
        """Members the run must not fill in: a required member of the body left out on purpose."""
        constraint = self.constraint
        return frozenset({constraint.argument}) if constraint.keyword == "required" and not constraint.path \
            else frozenset()

    def __call__(self, draw, body: dict) -> dict:
        constraint = self.constraint
        before = self.findings_of(body)
        whole = constraint.keyword in ("required", "additionalProperties")  # a rule of the object at the path
        holder = _holder(draw, body, constraint.path, len(constraint.path) if whole else len(constraint.path) - 1)
        if constraint.keyword == "required":
            assume(isinstance(holder, dict))
            holder.pop(constraint.argument, None)
        elif constraint.keyword == "additionalProperties":
            assume(isinstance(holder, dict))
            holder[UNEXPECTED_MEMBER] = 1
        else:
            key = constraint.path[-1]
            current = _current(holder, key)
            value = draw(_breaking(constraint, current))
            _put(draw, holder, key, value)
        assume(self.breaks_only(body, before))
        return body

    def findings_of(self, body: dict) -> list[SchemaFinding]:
        """What the schemas find in `body` as the run sends it (with a model where the body names none)."""
        api = api_of(self.constraint.api)
        sent = body if api.model_field in body or api.model_field in self.omit else {api.model_field: "m", **body}
        return schema_set(self.profile).findings(f"{api.name}/{api.schemas['request']}", sent)

    def breaks_only(self, body: dict, before: Sequence[SchemaFinding] = ()) -> bool:
        """Whether `body` fails this constraint and nothing of any other member beyond what the valid body it was
        made from already did (`before`: a rule graded INFO, as a Responses tool without `strict`): a value of
        another type also falls outside the member's enumeration, and a rule two schemas state (an item's type)
        fails in both, but no other member is touched."""
        findings = self.findings_of(body)
        broken = {finding.pointer for finding in findings if self.constraint.breaks(finding)}
        already = {(finding.schema, finding.pointer) for finding in before}
        return bool(broken) and all(finding.pointer in broken or (finding.schema, finding.pointer) in already
                                    for finding in findings)


def schema_violations(api: str, profile: str | None = None, levels=SENT_LEVELS) -> tuple[SchemaViolation, ...]:
    """A violation for each constraint of `api`'s request schema at one of `levels`."""
    return tuple(SchemaViolation(constraint, profile) for constraint in constraints(api, profile)
                 if constraint.level in levels)


def _holder(draw, body: Any, path: tuple[str, ...], steps: int) -> Any:
    """The object or list at the first `steps` of `path` in `body`, made on the way where a member is absent (a
    list where the path goes on to an item); an item of a list drawn where the path says any item (an empty list:
    this body cannot hold the violation)."""
    holder = body
    for position, step in enumerate(path[:steps]):
        if step == ANY_ITEM:
            if not isinstance(holder, list):
                reject()
            if not holder:  # an item made for the violation, which the schemas' check keeps only if it fits
                holder.append({})
            holder = holder[draw(st.integers(0, len(holder) - 1))]
        else:
            holder = _child(holder, step, [] if path[position + 1:position + 2] == (ANY_ITEM,) else {})
    return holder


def _child(holder: Any, key: str, default: Any) -> Any:
    if not isinstance(holder, dict):
        reject()
    if holder.get(key) is None or (isinstance(default, list) and not isinstance(holder[key], list)):
        holder[key] = default  # a list where the path goes on to an item (a prompt given as a string: as a list)
    return holder[key]


def _current(holder: Any, key: str) -> Any:
    if key == ANY_ITEM:
        return holder[0] if isinstance(holder, list) and holder else None
    return holder.get(key) if isinstance(holder, dict) else None


def _put(draw, holder: Any, key: str, value: Any) -> None:
    if key == ANY_ITEM:
        if not isinstance(holder, list):
            reject()
        if holder:
            holder[draw(st.integers(0, len(holder) - 1))] = value
        else:
            holder.append(value)
    elif key == NEW_MEMBER:
        if not isinstance(holder, dict):
            reject()
        holder["1"] = value
    else:
        if not isinstance(holder, dict):
            reject()
        holder[key] = value


def _breaking(constraint: Constraint, current: Any) -> st.SearchStrategy:
    """Values that break `constraint` where `current` stands (what the valid body holds there, if anything)."""
    if constraint.keyword == "minItems":
        items = current if isinstance(current, list) else []
        return st.just(items[:constraint.argument - 1])
    if constraint.keyword == "maxItems":
        items = current if isinstance(current, list) and current else [f"item{n}" for n in range(constraint.argument + 1)]
        return st.just([items[n % len(items)] for n in range(constraint.argument + 1)])
    return _values(constraint)


@cache
def _values(constraint: Constraint) -> st.SearchStrategy:
    keyword, argument = constraint.keyword, constraint.argument
    integral = "number" not in constraint.types
    if keyword in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        # Steps of 1 (an integer) or 0.5 (a number) past the bound, or onto it where the bound is exclusive: the
        # plainest out-of-range values (0, -1, 2.5, 129) are where shrinking ends.
        past = keyword in ("minimum", "maximum")
        step, sign = (1 if integral else 0.5), (-1 if "inimum" in keyword else 1)
        return st.integers(int(past), BOUND_SPAN).map(lambda steps: argument + sign * step * steps)
    if keyword == "type":
        allowed = set(argument if isinstance(argument, tuple) else (argument,))
        if "number" in allowed:
            allowed.add("integer")
        return st.sampled_from([value for kind, value in WRONG_VALUES.items() if kind not in allowed])
    if keyword == "enum":
        members = [member for member in argument if isinstance(member, str)]
        near = [member.upper() for member in members] + [member + "s" for member in members]
        return st.sampled_from([value for value in (*OFF_ENUM, *near) if value not in argument])
    if keyword == "const":
        return st.just(f"{argument}_other" if isinstance(argument, str) else "other")
    if keyword == "pattern":
        return st.sampled_from([text for text in OFF_PATTERN if not re.search(argument, text)])
    if keyword == "minLength":
        return st.just("")
    if keyword == "maxLength":
        return st.integers(argument + 1, argument + 40).map(lambda size: "x" * size)
    if keyword == "maxProperties":
        return st.just({f"k{n}": "v" for n in range(argument + 1)})
    raise ValueError(f"no violation of {keyword!r}")
