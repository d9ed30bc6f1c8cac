"""The suites' fixtures (lmconform.suite_fixtures), and shape snapshots: taken only when asked for, since a run for a report must not fail for want of snapshots.

A run that neither compares nor writes them deselects the shape tests before any runs: they are no part of it,
and a report of the run lists no line for them. The terminal says why they were left out."""

from __future__ import annotations

import pytest

from lmconform.cases import Case
from lmconform.plugin import PLAN_KEY
from lmconform.snapshots import shape_extension, snapshot_folder
from lmconform.snapshots.diff import shape_diff
from lmconform.suite_fixtures import judge, lmconform_run  # noqa: F401 (the suites' fixtures, theirs alone)

SHAPE_FIXTURE = "assert_shape"
LEFT_OUT_KEY = pytest.StashKey[str]()


def _reason_to_skip(config: pytest.Config) -> str | None:
    if config.getoption("update_snapshots"):
        return None
    target = config.stash[PLAN_KEY].target
    if not target.server_version:
        return "shape snapshots: compared with --server-version V, written with --snapshot-update"
    folder = snapshot_folder(target)
    if not folder.is_dir():
        return f"shape snapshots: none at {folder}; --snapshot-update writes them"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Decided before any fixture runs, so that a run without snapshots does not start or probe the target for them.
    reason = _reason_to_skip(config)
    if reason is None:
        return
    shapes = [item for item in items if SHAPE_FIXTURE in getattr(item, "fixturenames", ())]
    if shapes:
        config.hook.pytest_deselected(items=shapes)
        items[:] = [item for item in items if SHAPE_FIXTURE not in getattr(item, "fixturenames", ())]
        config.stash[LEFT_OUT_KEY] = f"{len(shapes)} shape tests left out: {reason}"


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if LEFT_OUT_KEY in config.stash:
        terminalreporter.write_line(config.stash[LEFT_OUT_KEY])


@pytest.fixture(scope="session")
def shape_extension_class(pytestconfig: pytest.Config):
    target = pytestconfig.stash[PLAN_KEY].target
    return shape_extension(snapshot_folder(target), target.secrets)


@pytest.fixture
def assert_shape(snapshot, shape_extension_class):
    """Compare a case's shape with its snapshot (with --snapshot-update: write it). syrupy keeps the files; the
    failure is a unified diff of the whole shape, which pytest would otherwise cut to a few lines."""
    snapshot = snapshot.use_extension(shape_extension_class)

    def compare(case: Case, shape: dict) -> None:
        if snapshot(name=case.id) == shape:
            return
        result = snapshot.executions[snapshot.num_executions - 1]
        if result.exception:
            raise result.exception
        if result.recalled_data is None:
            pytest.fail(f"{case.id}: no shape snapshot at {result.snapshot_location}; --snapshot-update writes it",
                        pytrace=False)
        recorded = f"{shape_extension_class.folder.name}/{case.id}.json"
        pytest.fail(f"{case.id}: the shape of the answer differs from {recorded} "
                    f"(--snapshot-update records the new one)\n"
                    + shape_diff(result.recalled_data, result.asserted_data, recorded, "received"), pytrace=False)

    return compare
