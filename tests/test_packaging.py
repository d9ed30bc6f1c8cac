"""A release people can install: `python -m build` makes a wheel and an sdist that `twine check` passes, each with the
cases and schemas inside and none of the project's own tools; the wheel, installed in a fresh virtual environment,
runs `lmconform check` from another folder; and a pytest project that has lmconform installed and never uses it
runs exactly as without it.

Nothing is fetched: the build uses this environment's setuptools (--no-isolation), and the fresh environment gets
the wheel alone (--no-deps --no-index), installed by this environment's pip (`pip --python`: a pip of its own would
take three seconds to install), its dependencies read from this environment's site-packages through a path file. One test does it all, since the build and the environment are most of its cost."""

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import budget
import pytest

from lmconform import __version__

ROOT = Path(__file__).resolve().parent.parent
QUICK = ("--checks", "chat.stream.tool_call.index_zero", "--checks", "client.void.tool_call_parsed")
INSIDE = ("lmconform/cases/case.schema.json", "lmconform/apis/chat/cases/void-weather-tool.json",
          "lmconform/apis/chat/schemas/chunk.json", "lmconform/apis/responses/schemas/events/output-text-delta.json",
          "lmconform/schemas/common/error.json", "lmconform/schemas/overlays/lmstudio.json",
          "lmconform/suites/test_apis.py")
# The project's own fixture has the name of one of the suites' fixtures: it is the project's that its test gets.
UNRELATED_TEST = ("def test_arithmetic():\n    assert 1 + 1 == 2\n\n\n"
                  "def test_its_own_fixture(judge):\n    assert judge == 'the project'\n")
UNRELATED_CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef judge():\n    return 'the project'\n"


def run(*command, cwd: Path, status: int = 0, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env=env)
    assert done.returncode == status, f"{command}: {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_the_wheel_and_sdist_pass_twine_and_the_installed_wheel_checks_servers_and_stays_out_of_other_projects(
        tmp_path, server):
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT, cwd=tmp_path)
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")
    assert wheel.name == f"lmconform-{__version__}-py3-none-any.whl" and sdist.name == f"lmconform-{__version__}.tar.gz"
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist, cwd=tmp_path).stdout
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    in_sdist = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    assert set(INSIDE) <= in_wheel and set(INSIDE) <= in_sdist
    assert not any(name.startswith(("tools/", "tests/")) for name in in_wheel)

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)  # this environment's pip installs into it
    python, command = venv / "bin" / "python", venv / "bin" / "lmconform"
    purelib = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path)
                   .stdout.strip())
    (purelib / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", "--no-compile",
        wheel, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = run(python, "-c", "import lmconform; print(lmconform.__file__)", cwd=elsewhere).stdout
    assert where.startswith(str(purelib)), where

    # The suite `lmconform check` runs reads PYTEST_ADDOPTS: make check's budget, with the case the checks fail on.
    budgeted = {**os.environ, "PYTEST_ADDOPTS": " ".join((*budget.fuzz_options(),
                                                           *budget.case_options("chat/void-weather-tool")))}
    assert run(command, "--version", cwd=elsewhere).stdout == f"lmconform {__version__}\n"
    clean = run(command, "check", *QUICK, "--out", "out", cwd=elsewhere, env=budgeted)
    assert "Void · Chat completions" in clean.stdout and "✓ works" in clean.stdout
    assert {path.name for path in (elsewhere / "out").iterdir()} == {"report.html", "results.json", "junit.xml"}
    assert json.loads((elsewhere / "out" / "results.json").read_text())["lmconform"] == __version__
    faulty = run(command, "check", f"{server.base_url}/faults/tool-index-one", *QUICK, "--out", "faulty",
                 cwd=elsewhere, status=1, env=budgeted)
    assert re.search(r"\[([^\]]+)\]", faulty.stdout.split("Findings:", 1)[1])[1] == "chat.stream.tool_call.index_zero"

    project = tmp_path / "unrelated"
    project.mkdir()
    (project / "test_sums.py").write_text(UNRELATED_TEST)
    (project / "conftest.py").write_text(UNRELATED_CONFTEST)
    with_it = run(python, "-m", "pytest", "-p", "no:cacheprovider", "-rA", cwd=project)
    without = run(python, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-p", "no:lmconform", cwd=project)
    assert _steady(with_it.stdout) == _steady(without.stdout) and "2 passed" in with_it.stdout
    assert sorted(path.name for path in project.iterdir() if path.name != "__pycache__") == \
        ["conftest.py", "test_sums.py"]
    fixtures = run(python, "-m", "pytest", "-p", "no:cacheprovider", "--fixtures", cwd=project).stdout
    assert "lmconform" not in _steady(fixtures).replace(str(purelib), "")  # pytest's plugins line names every plugin
    # Nor an option: the plugin wakes only for a command line that names lmconform's suites.
    usage = run(python, "-m", "pytest", "-p", "no:cacheprovider", "--help", cwd=project).stdout
    assert "--endpoint" not in usage and "lmconform" not in _steady(usage)
    suites_usage = run(python, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "lmconform.suites", "--help",
                       cwd=project).stdout
    assert "--endpoint" in suites_usage


def test_the_readme_says_where_lmconform_installs_from_and_which_python_it_needs():
    """A newcomer reads the README before anything else: its quick start (two commands, which need a checkout) and its
    install say the Python the package requires, and install from a checkout, since no package index serves it."""
    readme = (ROOT / "README.md").read_text()
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    python = f"Python {required.removeprefix('>=')} or later"
    quick = readme.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
    (commands,) = re.findall(r"^```sh\n(.*?)^```", quick, re.MULTILINE | re.DOTALL)
    assert [line.partition("#")[0].strip() for line in commands.splitlines()] == ["make report", "make test"]
    assert "In a checkout" in quick and python in quick
    install = readme.split("## Install and run\n", 1)[1].split("\n## ", 1)[0]
    assert python in install and "pip install ." in install and "pipx install ." in install
    assert "pipx run lmconform" not in readme and "pip install lmconform" not in readme


def _steady(output: str) -> str:
    """pytest's output without what differs from run to run: the plugins line, the rootdir and the time taken (and the
    rules, whose length follows it)."""
    lines = [line for line in output.splitlines() if not line.startswith(("plugins:", "rootdir:"))]
    return re.sub(r"=+", "=", re.sub(r" in [0-9.]+s", "", "\n".join(lines)))
