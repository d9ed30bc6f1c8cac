"""The checks. Importing this package registers every check in `REGISTRY`."""

from lmconform.checks import (  # noqa: F401  (registration)
    agents,
    chat,
    chat_message,
    chat_stream,
    clients,
    errors,
    generation,
    messages,
    models,
    native_chat,
    proxy,
    responses,
    schema,
    vscodelm,
    wire,
)
from lmconform.checks.registry import REGISTRY, Check, check, select

__all__ = ["REGISTRY", "Check", "check", "select"]
