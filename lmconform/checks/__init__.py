"""The checks. Importing this package registers every check in `REGISTRY`."""

from lmconform.checks import chat, clients, errors, generation, models, proxy, responses, vscodelm, wire  # noqa: F401  (registration)
from lmconform.checks.registry import REGISTRY, Check, check, select

__all__ = ["REGISTRY", "Check", "check", "select"]
