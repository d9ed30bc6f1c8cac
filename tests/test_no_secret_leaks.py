"""A run with a canary API key leaves the key nowhere: not in the terminal, the results record, the JUnit XML,
lmconform's HTML report (what it packs too), pytest-html's page, the shape snapshots, nor anywhere under fixtures/."""

import os
from pathlib import Path

import budget
import processes
from pages import unpacked

from lmconform.reference import ReferenceServer

ROOT = Path(__file__).resolve().parent.parent
CANARY = "sk-canary-7e3b9d1f5a"


def test_the_canary_key_is_nowhere_after_a_full_run(tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    env = {**os.environ, "LMCONFORM_API_KEY": CANARY, "LMCONFORM_SNAPSHOT_DIR": str(tmp_path / "snapshots")}
    with ReferenceServer() as server:
        # A fault makes findings, so evidence and curls are written too; the key travels on every request.
        finished = processes.run(
            budget.suite_command("-q",
             "--endpoint", f"{server.base_url}/faults/id-name-repeated", "--target-name", "canary",
             "--server-version", "1.0", "--snapshot-update", "--upstream", server.base_url,
             "--results-json", str(reports / "results.json"), "--junitxml", str(reports / "junit.xml"),
             "--report", str(reports / "report.html"), "--html", str(reports / "pytest.html"),
             "--self-contained-html",
             *budget.suite_options("proxy.*", "chat.stream.*", cases=budget.shown_by("id-name-repeated"))),
            cwd=ROOT, env=env, timeout=600)
    assert finished.returncode == 1, finished.stdout[-2000:]
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {"results.json", "junit.xml", "report.html", "pytest.html"} <= {path.name for path in written}
    assert any(path.suffix == ".json" and "snapshots" in path.parts for path in written)
    assert CANARY not in finished.stdout + finished.stderr
    for path in [*written, *(ROOT / "fixtures").rglob("*")]:
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), f"the key leaked into {path}"
    assert CANARY not in unpacked((reports / "report.html").read_text(encoding="utf-8"))  # what the page packs too
    assert "Bearer [Filtered]" in (reports / "results.json").read_text()
