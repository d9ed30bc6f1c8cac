"""Client verdicts: what a real client would have shown its user for a captured exchange.

`void` emulates Void's stream accumulator and the npm `openai` package under it, JavaScript semantics and
error messages included; `openai_python` replays the exchange through the installed openai Python SDK itself.
"""


def load_sdks() -> None:
    """Import the SDKs the client checks replay through, for a run that will: before it starts, so that they are
    among what the process holds for good (lmconform.wire.collector.freeze_long_lived). The checks import them at
    their first replay, not with the registry: both take longer to import than the rest of lmconform together, and a
    run without client checks, a collection or a usage error never needs them."""
    import lmconform.clients.anthropic_python  # noqa: F401
    import lmconform.clients.openai_python  # noqa: F401
