"""What the reference model answers under a JSON Schema (a response format's, a tool's parameters): an example of
the schema, made from the keywords a simple constrained decoder handles and then held to the whole schema by a Draft
2020-12 validator. A schema whose example breaks it uses a keyword the model cannot honour, and the server refuses
it by that keyword, as a server whose grammar converter lacks one should (`unhonoured`). Faults make answers that
break a schema on purpose (`breaking`): the schema accepted and ignored, or some of its keywords dropped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

# Past this depth an object lists only its required members and an array holds only its required items, so that a
# recursive schema ($ref to itself) ends.
DEPTH = 3
FORMATS = {"date": "2026-01-01", "date-time": "2026-01-01T00:00:00Z", "time": "00:00:00Z", "email": "a@example.com",
           "uuid": "00000000-0000-4000-8000-000000000000", "uri": "https://example.com/", "ipv4": "192.0.2.1"}
# The keywords that bound a size or a number: what a decoder that drops bounds forgets.
BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
                    "minItems", "maxItems", "minProperties", "maxProperties"})


def example(schema: Any, subject: str, root: Any = None, depth: int = 0) -> Any:
    """A value of `schema`, the string values being `subject` (what the user asked about) where the schema lets
    them; the properties of an object all present until DEPTH."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return subject
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#"):
        return example(_resolved(root, reference), subject, root, depth)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        if isinstance(schema.get(combinator), list) and schema[combinator]:
            return example(schema[combinator][0], subject, root, depth)
    if isinstance(schema.get("allOf"), list):
        merged = {key: value for key, value in schema.items() if key != "allOf"}
        for part in schema["allOf"]:
            merged.update(_resolved(root, part["$ref"]) if isinstance(part, dict) and "$ref" in part else
                          part if isinstance(part, dict) else {})
        return example(merged, subject, root, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, subject, root, depth)
    if kind == "array" or (kind is None and ("items" in schema or "prefixItems" in schema)):
        return _array(schema, subject, root, depth)
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, subject)


def unhonoured(schema: Any, subject: str) -> str | None:
    """Why the model cannot answer under `schema` (the keyword its example breaks, and where), or None."""
    from jsonschema import Draft202012Validator  # see _errors
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return f"the schema is not a JSON Schema: {error.message}"
    broken = next(_errors(example(schema, subject), schema), None)
    if broken is None:
        return None
    where = "".join(f"/{step}" for step in broken.absolute_path) or "/"
    return f"JSON Schema keyword '{broken.validator}' (at {where}) is not supported in a structured output"


def breaking(schema: Any, subject: str, keywords: frozenset[str] | None = None) -> Any:
    """An answer that breaks `schema` (one of `keywords` of it, if given), or the example when no simple change
    does: the first of a fixed list of changes, deepest place first, that the validator rejects."""
    value = example(schema, subject)
    if keywords is None and next(_errors(value, schema), None) is not None:
        return value
    for changed in _changes(value):
        if any(keywords is None or error.validator in keywords for error in _errors(changed, schema)):
            return changed
    return value


def _errors(value: Any, schema: Any) -> Iterator[Any]:
    # Imported here: the reference bridge, a process started once per case, holds the reference model for its echo
    # agent and never validates; jsonschema is half of what it would import (0.08 of its 0.15 s).
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).iter_errors(value)


def _resolved(root: Any, reference: str) -> Any:
    node = root
    for step in reference.lstrip("#").strip("/").split("/") if reference != "#" else ():
        node = node.get(step.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
    return node if node is not None else {}


def _object(schema: dict, subject: str, root: Any, depth: int) -> dict:
    properties = given if isinstance(given := schema.get("properties"), dict) else {}
    required = listed if isinstance(listed := schema.get("required"), list) else list(properties)
    names = list(properties) if depth < DEPTH else [name for name in properties if name in required]
    return {name: example(properties[name], subject, root, depth + 1) for name in names}


def _array(schema: dict, subject: str, root: Any, depth: int) -> list:
    prefix = given if isinstance(given := schema.get("prefixItems"), list) else []
    items = [example(item, subject, root, depth + 1) for item in prefix]
    least = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
    wanted = max(least, len(items) + (1 if depth < DEPTH and schema.get("items") is not False else 0))
    for position in range(len(items), wanted):
        item = example(schema.get("items"), subject, root, depth + 1)
        items.append(_distinct(item, position) if schema.get("uniqueItems") else item)
    return items


def _distinct(item: Any, position: int) -> Any:
    """The `position`th of several items that must differ."""
    if isinstance(item, bool) or not isinstance(item, (int, float, str)):
        return item
    return item + position if not isinstance(item, str) else f"{item}{position}" if position else item


def _number(schema: dict, kind: str) -> int | float:
    value: int | float = schema.get("minimum", 1 if kind == "integer" else 1.5)
    if isinstance(schema.get("exclusiveMinimum"), (int, float)):
        value = max(value, schema["exclusiveMinimum"] + 1)
    for bound, margin in (("maximum", 0), ("exclusiveMaximum", 1)):
        if isinstance(schema.get(bound), (int, float)) and value > schema[bound] - margin:
            value = schema[bound] - margin
    return int(value) if kind == "integer" and float(value).is_integer() else value


def _string(schema: dict, subject: str) -> str:
    text = FORMATS.get(named, subject) if isinstance(named := schema.get("format"), str) else subject
    least, most = schema.get("minLength"), schema.get("maxLength")
    if isinstance(least, int) and len(text) < least:
        text = text + "x" * (least - len(text))
    return text[:most] if isinstance(most, int) else text


# Changes that break the usual keywords, by the JSON type of the value they replace: values out of any range, of
# another type, or of another size.
_REPLACEMENTS: list[Callable[[Any], Any]] = [
    lambda value: "",
    lambda value: "x" * 100,
    lambda value: 10**15,
    lambda value: -10**15,
    lambda value: 0.5,
    lambda value: None,
    lambda value: [],
    lambda value: {},
    lambda value: value + value[:1] if isinstance(value, list) else value,
    lambda value: value * 20 if isinstance(value, list) else value,
    lambda value: {**value, "extra": 1} if isinstance(value, dict) else value,
    lambda value: {"x": 1} if isinstance(value, dict) else value,
]


def _changes(value: Any) -> Iterator[Any]:
    """`value` with one change made: in its members and items first (each member's value, then the member left
    out), depth first, so that an object stays an object where it can; then the value itself replaced."""
    if isinstance(value, dict):
        for name in value:
            for changed in _changes(value[name]):
                yield {**value, name: changed}
            yield {key: member for key, member in value.items() if key != name}
    elif isinstance(value, list):
        for position, item in enumerate(value):
            for changed in _changes(item):
                yield [*value[:position], changed, *value[position + 1:]]
    for replace in _REPLACEMENTS:
        yield replace(value)
