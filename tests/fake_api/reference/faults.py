"""The made-up echo API's faults."""

from __future__ import annotations

from typing import Any

from lmconform.reference.faults.registry import Stage, fault

ANSWER = Stage("the echo's answer")


@fault("echo-text-dropped", ANSWER, summary="the answer's text is left empty", seen_in="tests/fake_api")
def text_dropped(answer: dict[str, Any]) -> dict[str, Any]:
    return {**answer, "text": ""}


@fault("echo-object-missing", ANSWER, summary="the answer has no `object`", seen_in="tests/fake_api")
def object_missing(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "object"}
