"""The checks. Importing this package registers every check in `REGISTRY`."""

from lmconform.checks import (  # noqa: F401  (registration)
    chat,
    clients,
    errors,
    generation,
    models,
    proxy,
    responses,
    schema,
    wire,
)
from lmconform.checks.registry import REGISTRY, Check, check, select

__all__ = ["REGISTRY", "Check", "check", "select"]
