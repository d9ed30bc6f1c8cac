"""`make test` runs on several workers (`-n auto --dist loadgroup`) and keeps the tests of each real server on one of
them with an `xdist_group` mark: a group's module fixture starts its servers once, and two LiteLLM or llama-server
processes never compete for the two cores. Whether the mark takes depends on the installed pytest and pytest-xdist
together (pytest 9.2 no longer reads the node id that pytest-xdist 3.8 rewrites to mark a group); when it does not,
every module fixture of a group is set up on both workers at once, which is slow and starves the servers.
"""

import os
import sys

import processes
import pytest

GROUPED_MODULE = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("one-server")

@pytest.mark.parametrize("n", range(8))
def test_grouped(n):
    with open(os.environ["WORKERS_FILE"], "a") as workers:
        print(os.environ["PYTEST_XDIST_WORKER"], file=workers)
'''

UNGROUPED_MODULE = '''
import pytest

@pytest.mark.parametrize("n", range(8))
def test_ungrouped(n):
    pass
'''


def _outside_this_run(**variables: str) -> dict[str, str]:
    """The environment without what this run's own worker set (PYTEST_XDIST_WORKER and the like)."""
    return {**{name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}, **variables}


@pytest.mark.slow
def test_the_tests_of_one_group_run_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED_MODULE)
    (tmp_path / "test_ungrouped.py").write_text(UNGROUPED_MODULE)
    workers_file = tmp_path / "workers.txt"
    ran = processes.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         *processes.workers(2, "loadgroup"), str(tmp_path)], cwd=tmp_path, timeout=300,
                        env=_outside_this_run(WORKERS_FILE=str(workers_file)))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    workers = workers_file.read_text().split()
    assert len(workers) == 8
    assert len(set(workers)) == 1, (f"the tests of one xdist_group ran on {sorted(set(workers))}: --dist loadgroup "
                                    "does not hold with this pytest and pytest-xdist (see the test extra in "
                                    "pyproject.toml)")
