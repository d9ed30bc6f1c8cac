"""How much generated input the tests that judge many examples send: all of it in `make test`, a tenth in
`make check` (LMCONFORM_TEST_BUDGET=check), the contributor's quick loop. Such a test proves the same property
either way (no check raises a false alarm on a legal example); the full budget only tries more examples, and
`make test` is the one that must pass before a merge."""

import os

CHECK = os.environ.get("LMCONFORM_TEST_BUDGET") == "check"


def examples(full: int) -> int:
    """The number of examples a test sends: `full` in `make test`, a tenth of it in `make check`."""
    return max(1, full // 10) if CHECK else full
