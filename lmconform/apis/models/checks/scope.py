"""Which cases the model list checks judge."""

from __future__ import annotations

from lmconform.cases import Case


def models_list(case: Case) -> bool:
    return case.api == "models" and case.path == "/v1/models" and case.method == "GET"
