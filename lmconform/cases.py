"""Cases: requests kept as data in fixtures/cases/<api>/<slug>.json, validated by schemas/case.schema.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from lmconform.apis import api_of

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = PROJECT_ROOT / "fixtures" / "cases"
CASE_SCHEMA = PROJECT_ROOT / "schemas" / "case.schema.json"


@dataclass(frozen=True)
class Case:
    id: str  # "<api>/<slug>"
    api: str
    slug: str
    description: str
    provenance: dict
    method: str
    path: str
    body: Any
    raw_body: str | None
    expect_status: str
    feature: str | None
    follow_up: dict | None = None
    fuzz: str | None = None

    @property
    def streamed(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def tools(self) -> list:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return tools if isinstance(tools, list) else []

    @property
    def tool_choice(self) -> Any:
        return self.body.get("tool_choice") if isinstance(self.body, dict) else None

    @property
    def asks_usage(self) -> bool:
        options = self.body.get("stream_options") if isinstance(self.body, dict) else None
        return isinstance(options, dict) and options.get("include_usage") is True

    @property
    def previous_response_id(self) -> Any:
        return self.body.get("previous_response_id") if isinstance(self.body, dict) else None

    @property
    def valid(self) -> bool:
        return self.expect_status == "success"

    @property
    def invalid(self) -> bool:
        return self.expect_status == "client_error"

    def body_for(self, model: str | None, max_tokens: int | None = None, temperature: float | None = None) -> Any:
        """The body as sent to a target: the run's model, output cap and temperature filled in where the case
        leaves them open (a real model with no cap can talk until its context is full)."""
        if not isinstance(self.body, dict):
            return self.body
        defaults = {"model": model, "temperature": temperature}
        cap_field = api_of(self.api).output_cap
        if cap_field:
            defaults[cap_field] = max_tokens
        filled = {key: value for key, value in defaults.items() if value is not None and key not in self.body}
        return {**filled, **self.body}


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
    return Case(
        id=f"{api}/{path.stem}",
        api=api,
        slug=path.stem,
        description=data["description"],
        provenance=data["provenance"],
        method=request["method"],
        path=request["path"],
        body=request.get("body"),
        raw_body=request.get("raw_body"),
        expect_status=data["expect"]["status"],
        feature=data.get("feature"),
        follow_up=data.get("follow_up"),
        fuzz=data.get("fuzz"),
    )


@cache
def load_cases(api: str, root: Path = CASES_DIR) -> tuple[Case, ...]:
    return tuple(load_case(path) for path in sorted((root / api).glob("*.json")))
