"""Client verdicts: what a real client would have shown its user for a captured exchange.

`void` emulates Void's stream accumulator and the npm `openai` package under it, JavaScript semantics and
error messages included; `openai_python` replays the exchange through the installed openai Python SDK itself.
"""
