"""Invalid request bodies: a valid body with exactly one violation, to be refused with a 4xx. Most are derived from
the request schemas, one per constraint (lmconform.fuzz.derived); each API's folder writes by hand only those of
rules that span members, which no constraint of one member states (`fuzz.py`: `VIOLATIONS`, each saying why): a
`tool_choice` naming a tool that is not offered, a tool result without its call, a message whose content does not
fit its role. What they share is here.

A violation is a function from a valid body to an invalid one, with a name and the level at which a server must
refuse it (a hand-written one: MUST, a structure no server can read); which one applied is kept with the example,
so a finding says what the server let through.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from hypothesis import strategies as st

from lmconform.fuzz.bodies import utf8_characters
from lmconform.vocabulary import Level

Violation = Callable[..., dict]  # (draw, body) -> the body with one violation

# A value of each JSON type but the one a field takes.
WRONG_VALUES = (7, 1.5, True, "text", ["a list"], {"an": "object"})


def unknown_role(known: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(("robot", "model", "User", "")),
                     st.text(utf8_characters, max_size=12)).filter(lambda role: role not in known)


def wrong_type(draw, accepted: tuple[type, ...]) -> object:
    wrong = [value for value in WRONG_VALUES if not isinstance(value, accepted)]
    return wrong[draw(st.integers(0, len(wrong) - 1))]


@st.composite
def invalid_bodies(draw, valid: st.SearchStrategy[dict], violation: Violation) -> tuple[Violation, dict]:
    """(the violation, a body drawn from `valid` with exactly that violation)."""
    return violation, violation(draw, copy.deepcopy(draw(valid)))


def name_of(violation: Violation) -> str:
    return getattr(violation, "name", None) or violation.__name__.replace("_", " ")


def level_of(violation: Violation) -> Level:
    return getattr(violation, "level", Level.MUST)
