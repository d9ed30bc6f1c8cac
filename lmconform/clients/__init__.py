"""Client verdicts: what a real client would have shown its user for a captured exchange.

`void` emulates Void's stream accumulator and the npm `openai` package under it, JavaScript semantics and
error messages included; `openai_python` replays the exchange through the installed openai Python SDK itself.
"""

from collections.abc import Iterable
from importlib import import_module


def load_sdks(surfaces: Iterable[str]) -> None:
    """Import the clients the run's client checks replay through (`client.openai_python`: this package's module of
    that name), for a run that will: before it starts, so that they are among what the process holds for good
    (lmconform.wire.collector.freeze_long_lived). The checks import them at their first replay, not with the
    registry: the SDKs take longer to import than the rest of lmconform together (the anthropic SDK alone about
    1.4 s), and a run without client checks, or without the API a client speaks, never needs them."""
    for surface in sorted(surfaces):
        import_module(f"{__name__}.{surface.removeprefix('client.')}")
