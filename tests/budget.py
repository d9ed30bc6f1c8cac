"""How much the tests that repeat one proof over many inputs do: all of it in `make test`, less in `make check`
(LMCONFORM_TEST_BUDGET=check), the contributor's quick loop. Such a test proves the same property either way; the
full budget only tries more of it, and `make test` is the one that must pass before a merge:
- a test that judges many generated examples (no check raises a false alarm on a legal one) sends a tenth of them;
- the fault catalogue plays, against each fault, the cases of the API the fault breaks rather than every case."""

import os

CHECK = os.environ.get("LMCONFORM_TEST_BUDGET") == "check"


def examples(full: int) -> int:
    """The number of examples a test sends: `full` in `make test`, a tenth of it in `make check`."""
    return max(1, full // 10) if CHECK else full
