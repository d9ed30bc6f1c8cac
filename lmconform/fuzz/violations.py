"""Invalid request bodies: a valid body with exactly one violation, each of which every server must refuse with a
4xx — a wrong JSON type, a missing required field, a value out of its enumeration, a malformed tool, an unknown
role, a `tool_choice` naming a tool that is not offered. Each API's folder lists its own violations (`fuzz.py`:
`VIOLATIONS`); what they share is here.

A violation is a named function from a valid body to an invalid one; which one applied is kept with the example,
so a finding says what the server let through.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from hypothesis import strategies as st

Violation = Callable[..., dict]  # (draw, body) -> the body with one violation

# A value of each JSON type but the one a field takes.
WRONG_VALUES = (7, 1.5, True, "text", ["a list"], {"an": "object"})


def unknown_role(known: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(("robot", "model", "User", "")),
                     st.text(max_size=12)).filter(lambda role: role not in known)


def wrong_type(draw, accepted: tuple[type, ...]) -> object:
    wrong = [value for value in WRONG_VALUES if not isinstance(value, accepted)]
    return wrong[draw(st.integers(0, len(wrong) - 1))]






@st.composite
def invalid_bodies(draw, valid: st.SearchStrategy[dict], violation: Violation) -> tuple[str, dict]:
    """(the violation's name, a body drawn from `valid` with exactly that violation)."""
    return name_of(violation), violation(draw, copy.deepcopy(draw(valid)))


def name_of(violation: Violation) -> str:
    return violation.__name__.replace("_", " ")
