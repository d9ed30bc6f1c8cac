"""Reading cases: `<api>/<slug>.json` files beside this module (shipped with the package), each validated by
case.schema.json, the fixture format's own schema."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema

from lmconform.apis import api_of
from lmconform.cases.model import FIRST, Case, Turn

CASES_DIR = Path(__file__).resolve().parent
CASE_SCHEMA = CASES_DIR / "case.schema.json"


class CaseError(ValueError):
    pass


@cache
def case_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(CASE_SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_case(path: Path) -> Case:
    try:
        data = json.loads(path.read_text())
    except ValueError as error:
        raise CaseError(f"{path}: not JSON: {error}") from None
    errors = sorted(case_validator().iter_errors(data), key=lambda e: list(e.path))
    if errors:
        raise CaseError(f"{path}: {errors[0].message} at {'/'.join(map(str, errors[0].path)) or '(top)'}")
    api = path.parent.name
    request = data["request"]
    names = [FIRST, *(turn["name"] for turn in data.get("turns", ()))]
    for turn in data.get("turns", ()):
        for reference in (turn.get("previous"), turn.get("answers_call_of")):
            if reference is not None and reference not in names[:names.index(turn["name"])]:
                raise CaseError(f"{path}: turn {turn['name']!r} refers to {reference!r}, which is not an earlier turn")
    if len(set(names)) != len(names):
        raise CaseError(f"{path}: two turns share a name")
    return Case(
        id=f"{api}/{path.stem}",
        api=api,
        slug=path.stem,
        description=data["description"],
        provenance=data["provenance"],
        method=request.get("method", api_of(api).method),
        path=request.get("path", api_of(api).path),
        body=request.get("body"),
        raw_body=request.get("raw_body"),
        expect_status=data["expect"]["status"],
        feature=data.get("feature"),
        turns=tuple(Turn(**turn) for turn in data.get("turns", ())),
        source=data.get("source"),
        omit=frozenset(data.get("omit", ())),
    )


@cache
def load_cases(api: str, root: Path = CASES_DIR) -> tuple[Case, ...]:
    return tuple(load_case(path) for path in sorted((root / api).glob("*.json")))
