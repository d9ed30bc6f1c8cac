"""A fast answer to "is this payload valid?", for the schemas where one can be given with the same meaning as the
Draft 2020-12 validator's: the compiled (reference-free) copy of a schema is turned into Python code by
fastjsonschema, as Draft 7. Most payloads of a healthy answer are valid, and for them that is the whole work; a
payload it rejects is graded by jsonschema as before, so every finding is jsonschema's, word for word.

The copy is compiled only when every keyword in it means in Draft 7 what it means in Draft 2020-12 (ALLOWED), and
annotations are left out of it (ANNOTATIONS): a schema with any other keyword gets no fast path and is validated
by jsonschema alone. fastjsonschema may be stricter than jsonschema on a corner (a pattern written for ECMA 262),
which costs only time: what it rejects goes to jsonschema, which decides. What it accepts must be valid for
jsonschema too; tests/test_schema_fast.py checks that on generated and mutated payloads of every schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastjsonschema.draft07 import CodeGeneratorDraft07
from fastjsonschema.ref_resolver import RefResolver

from lmconform.schemas.documents import LEVEL_KEY

# Keywords that validate the same way in Draft 7 and in Draft 2020-12, on the reference-free copies. Left out on
# purpose: `items` as an array and `additionalItems` (2020-12 spells them prefixItems/items), `dependencies`,
# `$ref` (the copies have none), `format` (an annotation for jsonschema here, an assertion for fastjsonschema),
# `contains` (2020-12 adds minContains/maxContains), and everything 2019-09 and 2020-12 added (unevaluated*,
# dependent*, $dynamicRef).
ALLOWED = frozenset({
    "type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties", "propertyNames",
    "minProperties", "maxProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "items", "minItems",
    "maxItems", "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern",
})
# Keywords that assert nothing in Draft 2020-12 as jsonschema runs it (no format or content checking): left out of
# the fast copy. Draft 7's fastjsonschema would check contentMediaType and contentEncoding.
ANNOTATIONS = frozenset({
    "title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly",
    "contentMediaType", "contentEncoding", "contentSchema", LEVEL_KEY,
})
SCHEMA_MAPS = ("properties", "patternProperties")  # keywords whose value maps names to subschemas
VALUES = ("enum", "const")  # keywords whose value is data, not a subschema


class NotPortable(Exception):
    """The schema uses a keyword that Draft 7 does not read as Draft 2020-12 does."""


def portable(node: Any) -> Any:
    """The copy of a schema fastjsonschema compiles: the same assertions, without annotations. Raises
    NotPortable on a keyword outside ALLOWED and ANNOTATIONS, or on `items` given as an array."""
    if isinstance(node, bool):
        return node
    if not isinstance(node, dict):
        raise NotPortable(f"a schema that is neither an object nor a boolean: {node!r:.60}")
    copy: dict[str, Any] = {}
    for key, value in node.items():
        if key in ANNOTATIONS or key.startswith("x-"):
            continue
        if key not in ALLOWED:
            raise NotPortable(key)
        if key == "pattern":
            copy[key] = _dollars_in_sets_escaped(value)
        elif key in VALUES or key in ("type", "required") or isinstance(value, int | float | str):
            copy[key] = value
        elif key in SCHEMA_MAPS:
            copy[key] = {name: portable(child) for name, child in value.items()}
        elif key in ("allOf", "anyOf", "oneOf"):
            copy[key] = [portable(child) for child in value]
        elif key == "items" and isinstance(value, list):
            raise NotPortable("items as an array (prefixItems in Draft 2020-12)")
        else:
            copy[key] = portable(value)
    return copy


def _dollars_in_sets_escaped(pattern: str) -> str:
    """The same regular expression with each `$` inside a `[…]` set written `\\x24`: fastjsonschema turns every
    unescaped `$` into `\\Z` (end of string, no newline before it: stricter, which only costs time), and `\\Z`
    inside a set does not compile."""
    out, in_set, escaped = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_set = True
        elif char == "]":
            in_set = False
        elif char == "$" and in_set:
            char = "\\x24"
        out.append(char)
    return "".join(out)


def compiled(schema: dict) -> Callable[[Any], Any] | None:
    """A function that returns for a valid payload and raises for any other, or None when the schema has a
    keyword the fast path does not read as Draft 2020-12 does."""
    try:
        copy = portable(schema)
    except NotPortable:
        return None
    resolver = RefResolver.from_schema(copy, handlers={}, store={})
    # use_default=False: fastjsonschema would otherwise write `default`s into the payload it validates.
    generator = _Terse(copy, resolver=resolver, use_default=False)
    state = generator.global_state
    exec(generator.func_code, state)  # what fastjsonschema.compile does, with _Terse's code
    return state[resolver.get_scope_name()]


class _Terse(CodeGeneratorDraft07):
    """Draft 7's code with bare exceptions. An `if` that does not match, and each branch of an `anyOf` a payload
    does not take, raise inside the generated code, and fastjsonschema's own exception would be built with its
    message and a literal copy of the subschema each time: the most of the time of a valid chunk. The messages are
    never read: a rejected payload goes to jsonschema. (Its own `detailed_exceptions=False` fails to generate.)"""

    def exc(self, msg, *args, append_to_msg=None, rule=None):  # noqa: ARG002 - fastjsonschema's signature
        self.l("raise JsonSchemaValueException('')")
