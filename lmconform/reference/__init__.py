"""The embedded reference server: a deterministic stand-in for LM Studio's OpenAI-compatible API, with a
catalogue of faults that each reproduce one real-world defect.

The suite runs every check against it clean (all must pass) and with each fault (exactly the checks about that
defect must fail). A fault is chosen at startup or per request with a path prefix:
`/faults/tool-index-one/v1/chat/completions`.

Its doors are those of each API's folder (`lmconform/apis/<api>/reference/`), found through the table. What this
package exports is imported when first asked for: a door imports the modules below it (the model, the fault
registry) without starting the whole server.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {"create_app": "lmconform.reference.app", "FAULTS": "lmconform.reference.faults",
            "Fault": "lmconform.reference.faults", "parse_faults": "lmconform.reference.faults",
            "ReferenceServer": "lmconform.reference.server", "serve_forever": "lmconform.reference.server"}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)


__all__ = sorted(_EXPORTS)
