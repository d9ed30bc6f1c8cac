"""Shapes: every case's answer, with its volatile values masked, against the snapshot of this server version.

Runs with `--snapshot-update` (writes fixtures/snapshots/<server>-<version>/) or with `--server-version V` when
that folder exists (compares); skipped otherwise.
"""

import pytest

from lmconform.api_table import APIS
from lmconform.plugin import PLAN_KEY
from lmconform.snapshots import shape_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every case the run plays (--cases), but a source's: its examples are generated anew each run, and have no
    shape to keep; nor a case of the Responses API's WebSocket mode, whose answers are messages on a socket, not an
    HTTP answer to shape (its checks read each event)."""
    plan = metafunc.config.stash[PLAN_KEY]
    cases = [case for api in APIS for case in plan.cases_of(api) if not case.source and case.websocket is None]
    metafunc.parametrize("case", cases, ids=[case.id for case in cases])


def test_shape(case, assert_shape, lmconform_run):
    transport = APIS[case.api].transport
    if not lmconform_run.target.reaches(transport):  # a bridge's cases without one, an endpoint's without one
        pytest.skip(f"the target has no {transport} address for {case.api}")
    assert_shape(case, shape_of(lmconform_run.observe(case).exchange, case.api))
