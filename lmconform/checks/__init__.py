"""The checks. Importing this package registers every check in `REGISTRY`: those every API shares (the HTTP and SSE
framing, errors, generations, reasoning, schemas, what a proxy changes), then each API's own (its folder's `checks/`)."""

from lmconform.api_table import APIS
from lmconform.checks import (  # noqa: F401  (registration)
    agents,
    errors,
    generation,
    logprobs,
    pairs,
    parameters,
    proxy,
    reasoning,
    schema,
    structured,
    usage,
    wire,
)
from lmconform.checks.registry import REGISTRY, Check, check, select

for _api in APIS.values():
    _api.room("checks")  # registers the API's checks

__all__ = ["REGISTRY", "Check", "check", "select"]
