"""Validation with levels: a set of schema documents, one validator compiled per schema, and each failing keyword of
a payload turned into a finding with its level, its place in the payload and in the schema, and words a user reads.

The level of a finding is the most lenient `x-lmconform-level` met on the way from the schema's root down to the
subschema that holds the failing keyword, through `$ref`s; MUST when there is none. So the default is MUST, every
relaxation is written down, and an annotation grades everything below it (docs/schemas.md, "Levels").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from lmconform.schemas.documents import BASE_URI, LEVEL_KEY, escape
from lmconform.schemas.fast import compiled
from lmconform.vocabulary import Level

LENIENCY = (Level.MUST, Level.SHOULD, Level.INFO)  # strictest first
EXCERPT_CHARS = 80


@dataclass(frozen=True, slots=True)
class SchemaFinding:
    """One failing keyword on one payload."""

    level: Level
    pointer: str  # RFC 6901, into the payload: where the requirement is not met ("" is the whole payload)
    keyword: str  # the schema keyword that failed: type, required, const, enum, minimum, anyOf…
    expected: str  # what the keyword asks, in words
    actual: str  # what the payload has there
    schema: str  # where the keyword is: chat/chunk.json#/properties/created/type
    note: str = ""  # the schema's `$comment` on it: why it matters

    @property
    def key(self) -> tuple[str, str]:
        """Findings with the same key are the same defect, wherever and however often it shows."""
        return self.pointer, self.keyword


class SchemaSet:
    """Schema documents by `$id` (the base, or a profile's patched copies). They are not checked against the Draft
    2020-12 metaschema here, which would cost every run a third of a second: they ship with lmconform, and its tests
    check every document under every profile. Each schema is compiled on first use into a validator of a copy with
    every `$ref` replaced by the subschema it names, so that validating resolves no reference; each copied subschema
    remembers where its original is, for findings to name."""

    def __init__(self, documents: dict[str, dict]) -> None:
        self.documents = documents
        self.registry = Registry().with_resources(
            (uri, Resource.from_contents(document, default_specification=DRAFT202012))
            for uri, document in documents.items()).crawl()
        self._validators: dict[str, Draft202012Validator] = {}
        # (path, whether INFO counts) -> lmconform.schemas.fast's check of validity, or None
        self._fast: dict[tuple[str, bool], Any] = {}
        self._places: dict[int, str] = {}  # id(subschema) -> "chat/chunk.json#/properties/created"
        for uri, document in documents.items():
            self._index(document, uri.removeprefix(BASE_URI) + "#")
        self.ungraded: list[str] = []  # findings whose path the level walk lost: a defect of this module
        self._keep: list[dict] = []  # the compiled copies, alive for as long as their ids are keys of _places

    def _index(self, node: Any, place: str) -> None:
        if isinstance(node, dict):
            self._places[id(node)] = place
            for key, child in node.items():
                if key not in ("const", "enum", "examples", "default"):
                    self._index(child, f"{place}/{escape(key)}")
        elif isinstance(node, list):
            for position, child in enumerate(node):
                self._index(child, f"{place}/{position}")

    def uri(self, path: str) -> str:
        return path if path.startswith(BASE_URI) else BASE_URI + path

    def validator(self, path: str) -> Draft202012Validator:
        """The validator of the schema at `path` (`chat/chunk.json`), compiled once."""
        found = self._validators.get(path)
        if found is None:
            uri = self.uri(path)
            inlined = self._inlined(self.documents[uri], self.registry.resolver(base_uri=uri), ())
            found = self._validators[path] = Draft202012Validator(inlined)
        return found

    def _inlined(self, node: Any, resolver: Any, trail: tuple[int, ...]) -> Any:
        """A copy of `node` without references: `{"$ref": X, …}` becomes `{…, "allOf": [X's copy, …]}`. Its
        annotations stay where they were, so the level of a finding reads the same on the copy."""
        if isinstance(node, list):
            return [self._inlined(item, resolver, trail) for item in node]
        if not isinstance(node, dict):
            return node
        if id(node) in trail:
            raise ValueError(f"{self._places.get(id(node))}: a schema that contains itself cannot be compiled")
        trail = (*trail, id(node))
        copy: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$id", "$schema", "$anchor", "$defs", "$ref"):
                continue
            copy[key] = value if key in ("const", "enum", "examples", "default") else \
                self._inlined(value, resolver, trail)
        if isinstance(node.get("$ref"), str):
            resolved = resolver.lookup(node["$ref"])
            copy["allOf"] = [self._inlined(resolved.contents, resolved.resolver, trail), *copy.get("allOf", [])]
        if id(node) in self._places:
            self._places[id(copy)] = self._places[id(node)]
        self._keep.append(copy)
        return copy

    def valid(self, path: str, payload: Any, levels: tuple[Level, ...] = LENIENCY) -> bool | None:
        """True when the fast path finds no failing keyword of `payload` at `levels`; None when it cannot say (it
        rejects it, or the schema has no fast path), and jsonschema decides."""
        key = (path, Level.INFO in levels)
        fast = self._fast.get(key, self._fast)
        if fast is self._fast:
            schema = self.validator(path).schema
            fast = self._fast[key] = compiled(schema if Level.INFO in levels else above_info(schema))
        if fast is None:
            return None
        try:
            fast(payload)
        except Exception:  # a rejection, or a corner the generated code trips on: jsonschema decides either way
            return None
        return True

    def findings(self, path: str, payload: Any, levels: tuple[Level, ...] = LENIENCY) -> list[SchemaFinding]:
        """Every failing keyword of `payload` against the schema at `path` at one of `levels`: none for a payload
        the fast path accepts, jsonschema's own for any other."""
        return list(self.iter_findings(path, payload, levels))

    def iter_findings(self, path: str, payload: Any, levels: tuple[Level, ...] = LENIENCY) -> Iterator[SchemaFinding]:
        """findings(), one at a time: jsonschema walks the payload only as far as the findings asked for."""
        if self.valid(path, payload, levels):
            return
        validator = self.validator(path)
        for error in validator.iter_errors(payload):
            finding = self._finding(path, validator.schema, error)
            if finding.level in levels:
                yield finding

    def _finding(self, path: str, root: dict, error: ValidationError) -> SchemaFinding:
        keyword = error.validator if isinstance(error.validator, str) else "false"
        pointer = "".join(f"/{escape(str(step))}" for step in error.absolute_path)
        subschema = error.schema if isinstance(error.schema, dict) else {}
        note = subschema.get("$comment", "")
        if keyword == "required":
            missing = missing_member(error)
            pointer += f"/{escape(missing)}"
            member = subschema.get("properties", {}).get(missing)
            note = note or (member.get("$comment", "") if isinstance(member, dict) else "")
            expected, actual = "present", "absent"
        else:
            expected, actual = expectation(keyword, error.validator_value), described(error.instance)
        place = self._places.get(id(error.schema), f"{path}#?")
        level = self._level(path, root, error)
        return SchemaFinding(level, pointer, keyword, expected, actual, f"{place}/{keyword}", note)

    def _level(self, path: str, root: dict, error: ValidationError) -> Level:
        """The most lenient level on the way from the root to the subschema holding the failing keyword: the
        schema path of the error, walked on the compiled copy, which has no reference to follow."""
        node: Any = root
        marks: list[Level] = []
        for step in [*error.schema_path][:-1]:  # the last step is the failing keyword
            if isinstance(node, dict) and node.get(LEVEL_KEY) in Level.__members__:
                marks.append(Level(node[LEVEL_KEY]))
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if node is not error.schema:
            self.ungraded.append(f"{path} {'/'.join(map(str, error.schema_path))}")
            return Level.MUST
        if isinstance(node, dict) and node.get(LEVEL_KEY) in Level.__members__:
            marks.append(Level(node[LEVEL_KEY]))
        return max(marks, key=LENIENCY.index, default=Level.MUST)

    def levels(self, path: str) -> set[Level]:
        """The levels a finding on this schema can have: MUST (the default) and every annotation it can reach."""
        found = {Level.MUST}

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if node.get(LEVEL_KEY) in Level.__members__:
                    found.add(Level(node[LEVEL_KEY]))
                for key, child in node.items():
                    if key not in ("const", "enum", "examples", "default"):
                        walk(child)
            elif isinstance(node, list):
                for child in node:
                    walk(child)

        walk(self.validator(path).schema)
        return found


# Keywords whose subschemas' failures jsonschema reports as the subschema's own, so that the level walk passes
# through the subschema and its mark grades them. Under anyOf, oneOf, not, if and contains a subschema's failure is
# the parent's keyword, graded at the parent, and a subschema left out would change whether the parent fails.
GRADED_THROUGH = frozenset({"properties", "patternProperties", "additionalProperties", "items", "prefixItems", "allOf",
                            "then", "else"})


def above_info(node: Any) -> Any:
    """A compiled (reference-free) schema without what can only fail at INFO: each subschema marked INFO, where its
    mark grades everything below it, becomes `true`. A payload it accepts has no finding at MUST or SHOULD: the fast
    answer for a request that breaks only what the spec leaves open (a Responses tool without `strict`), which
    jsonschema would otherwise walk whole."""
    if not isinstance(node, dict):
        return node
    if node.get(LEVEL_KEY) == Level.INFO:
        return True
    copy: dict[str, Any] = {}
    for key, value in node.items():
        if key not in GRADED_THROUGH:
            copy[key] = value
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            copy[key] = {name: above_info(child) for name, child in value.items()}
        elif isinstance(value, list):
            copy[key] = [above_info(child) for child in value]
        else:
            copy[key] = above_info(value)
    return copy


def missing_member(error: ValidationError) -> str:
    """`required` fails once per absent member; which one, from the message that names it."""
    absent = [name for name in error.validator_value if isinstance(error.instance, dict) and name not in error.instance]
    return next((name for name in absent if repr(name) in error.message), absent[0] if absent else "?")


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def described(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"
    return f"{text} ({json_type(value)})"


def _types(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    words = {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}
    return " or ".join(words.get(name, f"a {name}") for name in names)


def _values(value: Any) -> Iterator[str]:
    return (json.dumps(item, ensure_ascii=False) for item in value)


def _form(schema: Any) -> str:
    """A subschema a `not` excludes, in words where it is one keyword."""
    if isinstance(schema, dict) and len(schema) == 1:
        ((keyword, value),) = schema.items()
        if keyword in ("type", "const", "enum"):
            return expectation(keyword, value)
    return "the form the schema excludes"


def expectation(keyword: str, value: Any) -> str:
    """What a keyword asks of the payload, in words."""
    plural = "" if value == 1 else "s"
    words = {
        "type": lambda: _types(value),
        "const": lambda: f"exactly {json.dumps(value, ensure_ascii=False)}",
        "enum": lambda: f"one of {', '.join(_values(value))}",
        "minimum": lambda: f"a number ≥ {value}",
        "maximum": lambda: f"a number ≤ {value}",
        "exclusiveMinimum": lambda: f"a number > {value}",
        "exclusiveMaximum": lambda: f"a number < {value}",
        "minLength": lambda: f"a string of at least {value} character{plural}",
        "maxLength": lambda: f"a string of at most {value} character{plural}",
        "minItems": lambda: f"at least {value} item{plural}",
        "maxItems": lambda: f"at most {value} item{plural}",
        "minProperties": lambda: f"at least {value} member{plural}",
        "maxProperties": lambda: f"at most {value} member{plural}",
        "uniqueItems": lambda: "items that all differ",
        "format": lambda: f"a string in the {value} format",
        "additionalProperties": lambda: "no member the schema does not name",
        "allOf": lambda: "every form the schema combines",
        "pattern": lambda: f"a string matching /{value}/",
        "anyOf": lambda: "one of the forms the schema allows",
        "oneOf": lambda: "exactly one of the forms the schema allows",
        "not": lambda: f"anything but {_form(value)}",
        "false": lambda: "absent",
    }
    return words[keyword]() if keyword in words else f"{keyword}: {json.dumps(value, ensure_ascii=False)}"
