"""Every constraint a request schema puts on one member of a request: a range, an enumeration, a length, a pattern,
a count of items, a required member, a closed object, a JSON type — each with where the schema holds it, its level
and the public facts it rests on (docs/schemas.md). The invalid requests of the negative mode are derived from them
(lmconform.fuzz.derived): one constraint broken, nothing else.

A constraint is read where it holds whatever else the request says: under `properties`, `items`, `allOf`, a `$ref`,
or a `then` whose `if` asks only of the value itself (`stop`'s count when it is a list, `max_tokens` at least 1
unless it is -1). A rule that holds only in a
branch chosen by another member (a message's content by its `role`, a tool choice's name by its `type`), or over
alternatives (`anyOf`, `not`), spans members: the hand-written violations of each API's fuzz.py keep those.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from lmconform.api_table import APIS
from lmconform.schemas import LEVEL_KEY, schema_set
from lmconform.schemas.grading import LENIENCY, SchemaFinding, SchemaSet
from lmconform.vocabulary import Level

FACTS_KEY = "x-lmconform-facts"
# Keywords whose argument bounds the value where they stand.
VALUE_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
                  "minItems", "maxItems", "maxProperties", "enum", "const")
VIOLATION_WORDS = {
    "minimum": "below its minimum {}", "maximum": "above its maximum {}", "exclusiveMinimum": "at or below {}",
    "exclusiveMaximum": "at or above {}", "minLength": "shorter than {}", "maxLength": "longer than {}",
    "pattern": "not matching /{}/", "minItems": "with fewer than {} items", "maxItems": "with more than {} items",
    "maxProperties": "with more than {} members", "enum": "outside its enumeration", "const": "other than {}",
    "type": "not {}", "additionalProperties": "with a member it does not define",
}
ANY_ITEM, NEW_MEMBER = "*", "+"  # steps of a constraint's path: any item of a list, a member not named


@dataclass(frozen=True)
class Constraint:
    api: str
    path: tuple[str, ...]  # members from the request's root; ANY_ITEM for an item, NEW_MEMBER for an unnamed member
    keyword: str
    argument: Any  # the keyword's value; for `required`, the member; for `additionalProperties`, False
    types: tuple[str, ...]  # the JSON types the value has where the constraint holds (none: any)
    level: Level
    location: str  # the keyword in its schema, as a finding names it: chat/request.json#/properties/n/allOf/0/maximum
    facts: tuple[str, ...]  # ids of docs/schemas.md's facts, the nearest the schema cites

    @property
    def member(self) -> str:
        """Where in a request, as a person reads it: `messages[].role`, `logit_bias.*`, `(the body)`."""
        words = [{ANY_ITEM: "[]", NEW_MEMBER: ".*"}.get(step, f".{step}") for step in self.path]
        return "".join(words).lstrip(".") or "(the body)"

    @property
    def name(self) -> str:
        """The violation that breaks it, in words: `temperature above its maximum 2`."""
        if self.keyword == "required":
            return f"{self.member + '.' if self.path else ''}{self.argument} missing"
        return f"{self.member} {VIOLATION_WORDS[self.keyword].format(self._shown)}"

    @property
    def _shown(self) -> str:
        values = self.argument if isinstance(self.argument, tuple) else (self.argument,)
        return " or ".join(json.dumps(value) if not isinstance(value, str) or self.keyword != "type" else value
                           for value in values)

    def breaks(self, finding: SchemaFinding) -> bool:
        """Whether `finding` is this constraint failing."""
        if finding.schema != self.location:
            return False
        return self.keyword != "required" or finding.pointer.rsplit("/", 1)[-1] == self.argument


def request_apis() -> list[str]:
    """The APIs with a request schema, in the table's order."""
    return [api.name for api in APIS.values() if "request" in api.schemas]


@cache
def constraints(api: str, profile: str | None = None) -> tuple[Constraint, ...]:
    """Every constraint of `api`'s request schema as `profile` reads it, in the schema's order."""
    schemas = schema_set(profile)
    path = f"{api}/{APIS[api].schemas['request']}"
    uri = schemas.uri(path)
    places = _places(schemas)
    found = _walk(schemas.documents[uri], schemas.registry.resolver(base_uri=uri), _Context(api, places))
    return tuple(dict.fromkeys(found))  # a schema reached twice (a $ref from two places) states its rules once


def _places(schemas: SchemaSet) -> dict[int, str]:
    """id(subschema) → its place (`chat/request.json#/properties/n`), as findings name it."""
    return schemas._places  # noqa: SLF001 - the same index findings are named by, so the two cannot disagree


@dataclass(frozen=True)
class _Context:
    api: str
    places: dict[int, str]
    path: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    level: Level = Level.MUST
    facts: tuple[str, ...] = ()
    trail: tuple[int, ...] = ()

    def at(self, **changes: Any) -> _Context:
        return _Context(**{**self.__dict__, **changes})


def _walk(node: Any, resolver: Any, context: _Context) -> Iterator[Constraint]:
    if not isinstance(node, dict) or id(node) in context.trail:
        return
    level = node.get(LEVEL_KEY)
    if isinstance(level, str) and level in Level.__members__ and LENIENCY.index(Level(level)) > LENIENCY.index(context.level):
        context = context.at(level=Level(level))
    facts = node.get(FACTS_KEY)
    context = context.at(facts=tuple(facts) if isinstance(facts, list) else context.facts, trail=(*context.trail, id(node)))
    place = context.places.get(id(node), "?")
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        # Under a condition that already holds it to these types (`if` string or object, `then` the tool choice's
        # schema), the type cannot fail here: the member's own `type` above states it.
        if context.path and not (context.types and set(context.types) <= set(types)):
            yield _constraint(context, "type", node["type"], f"{place}/type")
        context = context.at(types=tuple(types))
    for keyword in VALUE_KEYWORDS:
        if keyword in node:
            yield _constraint(context, keyword, node[keyword], f"{place}/{keyword}")
    for member in node.get("required", []):
        yield _constraint(context, "required", member, f"{place}/required")
    if node.get("additionalProperties") is False:
        yield _constraint(context, "additionalProperties", False, f"{place}/additionalProperties")
    if isinstance(node.get("$ref"), str):
        resolved = resolver.lookup(node["$ref"])
        yield from _walk(resolved.contents, resolved.resolver, context)
    for entry in node.get("allOf", []):
        yield from _walk(entry, resolver, context)
    condition = node.get("if")
    if isinstance(condition, dict) and not _names_members(condition) and isinstance(node.get("then"), dict):
        # A condition on the value itself (its type; not -1), not on another member: the rule of `then` is the
        # member's own. Which values meet the condition, the violation's check against the schemas decides.
        types = condition.get("type", list(context.types))
        types = types if isinstance(types, list) else [types]
        yield from _walk(node["then"], resolver, context.at(types=tuple(types)))
    inner = context.at(types=())
    for member, child in (node.get("properties") or {}).items():
        yield from _walk(child, resolver, inner.at(path=(*context.path, member)))
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], resolver, inner.at(path=(*context.path, ANY_ITEM)))
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], resolver, inner.at(path=(*context.path, NEW_MEMBER)))


def _names_members(condition: Any) -> bool:
    """Whether a condition speaks of members (a discriminator: `type` is "message", `role` absent)."""
    if isinstance(condition, dict):
        return bool({"properties", "required"} & set(condition)) or any(map(_names_members, condition.values()))
    return isinstance(condition, list) and any(map(_names_members, condition))


def _constraint(context: _Context, keyword: str, argument: Any, location: str) -> Constraint:
    # A constraint held inside a `then` keyed by type holds for that type only; a `type` keyword is its own.
    types = () if keyword == "type" else context.types
    frozen = tuple(argument) if isinstance(argument, list) else argument  # hashable, as a constraint is
    return Constraint(context.api, context.path, keyword, frozen, types, context.level, location, context.facts)
