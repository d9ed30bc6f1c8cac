"""The conformance suites, run with pytest: `pytest --pyargs lmconform.suites --endpoint URL` wherever lmconform is
installed (in a checkout, `pytest suites`). Thin: each parameterizes cases x checks; the work is lmconform's."""
