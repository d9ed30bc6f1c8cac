"""Shapes: every case's answer, with its volatile values masked, against the snapshot of this server version.

Runs with `--snapshot-update` (writes fixtures/snapshots/<server>-<version>/) or with `--server-version V` when
that folder exists (compares); skipped otherwise.
"""

import pytest

from lmconform.apis import APIS
from lmconform.cases import load_cases
from lmconform.snapshots import shape_of

# A source's examples are generated anew each run: they have no shape to keep.
CASES = [case for api in APIS for case in load_cases(api) if not case.source]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_shape(case, assert_shape, lmconform_run):
    transport = APIS[case.api].transport
    if not lmconform_run.target.reaches(transport):  # a bridge's cases without one, an endpoint's without one
        pytest.skip(f"the target has no {transport} address for {case.api}")
    assert_shape(case, shape_of(lmconform_run.observe(case).exchange, case.api))
