"""The checks. Importing this package registers every check in `REGISTRY`: those every API shares (the HTTP and SSE
framing, errors, generations, schemas, what a proxy changes), then each API's own (its folder's `checks/`)."""

from lmconform.apis import APIS
from lmconform.checks import errors, generation, proxy, schema, structured, wire  # noqa: F401  (registration)
from lmconform.checks.registry import REGISTRY, Check, check, select

for _api in APIS.values():
    _api.room("checks")  # registers the API's checks

__all__ = ["REGISTRY", "Check", "check", "select"]
