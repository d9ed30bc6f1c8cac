"""`pip install .` (not editable) gives a working lmconform: the wheel carries the cases and their schema and none
of the project's own tools, and `pytest --pyargs lmconform.suites` run from another folder finds the cases and
passes against the embedded reference server."""

import subprocess
import sys
import zipfile
from pathlib import Path

import budget
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtualenv with lmconform installed from its wheel; returns the venv's python."""
    folder = tmp_path_factory.mktemp("packaging")
    wheels = folder / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (wheel,) = wheels.glob("lmconform-*.whl")
    # No bytecode compiled at install: the SDKs it pulls in are large, and the test imports a small part of them.
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-compile", str(wheel)], check=True,
                   capture_output=True, timeout=900)
    return python


def test_the_wheel_carries_the_cases_and_not_the_projects_tools(installed):
    (wheel,) = (installed.parent.parent.parent / "wheels").glob("lmconform-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "lmconform/cases/case.schema.json" in names
    assert any(name.startswith("lmconform/apis/chat/cases/") and name.endswith(".json") for name in names)
    assert "lmconform/suites/test_apis.py" in names
    assert {"lmconform/apis/chat/schemas/chunk.json", "lmconform/apis/responses/schemas/events/output-text-delta.json",
            "lmconform/schemas/common/error.json", "lmconform/schemas/overlays/lmstudio.json"} <= set(names)
    assert not any(name.startswith(("tools/", "tests/")) or "targets/" in name for name in names)


def test_an_installed_suite_runs_from_another_folder(installed, tmp_path):
    where = subprocess.run([str(installed), "-c", "import lmconform; print(lmconform.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert "site-packages" in where and str(ROOT) not in where
    results = tmp_path / "results.json"
    finished = subprocess.run([str(installed), "-m", "pytest", "--pyargs", "lmconform.suites", "-q", "-p",
                               "no:cacheprovider", "--results-json", str(results), *budget.suite_options()],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-2000:]
    assert "passed" in finished.stdout and results.is_file()
