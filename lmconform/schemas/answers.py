"""An answer held to the schema its request gave it (a response format's schema, a tool's parameters): each failing
keyword with its JSON pointer into the answer, by the same Draft 2020-12 validator as the wire's schemas, with
`format` asserted, since a client that validates the answer (pydantic, zod) asserts it too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from lmconform.schemas.documents import escape
from lmconform.schemas.grading import described, expectation, missing_member


@dataclass(frozen=True)
class Breach:
    """One keyword of the request's schema that the answer breaks, where it breaks it."""

    keyword: str  # enum, pattern, required, additionalProperties…
    pointer: str  # RFC 6901 into the answer ("" is the whole answer)
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"`{self.keyword}` at {self.pointer or '/'}: {self.expected}, not {self.actual}"


class NotASchema(ValueError):
    """The request's schema is not a Draft 2020-12 schema: there is nothing to hold an answer to."""


def breaches(answer: Any, schema: Any) -> list[Breach]:
    """Every keyword of `schema` the answer breaks, deepest place first, as Draft 2020-12 reads the schema."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        raise NotASchema(error.message) from None
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(answer), key=lambda error: (-len(error.absolute_path), str(error.path)))
    return [_breach(error) for error in errors]


def _breach(error: ValidationError) -> Breach:
    keyword = error.validator if isinstance(error.validator, str) else "false"
    pointer = "".join(f"/{escape(str(step))}" for step in error.absolute_path)
    if keyword == "required":
        return Breach(keyword, f"{pointer}/{escape(missing_member(error))}", "present", "absent")
    return Breach(keyword, pointer, expectation(keyword, error.validator_value), described(error.instance))
