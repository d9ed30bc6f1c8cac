"""A schema finding as users read it — in pytest's output, the results record and the HTML report: the JSON pointer,
the schema keyword, Expected/Actual, the offending event and the curl that replays the request."""

import html
import json
import re
import sys
from pathlib import Path

import processes

from lmconform.verdicts.records import load_run

ROOT = Path(__file__).resolve().parent.parent


def test_a_schema_finding_shows_pointer_keyword_expected_actual_event_and_curl(tmp_path):
    results, report = tmp_path / "results.json", tmp_path / "report.html"
    finished = processes.run(
        [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-p", "no:cacheprovider", "-q",
         "--reference-fault", "event-item-id-missing", "--checks", "schema.responses.*", "-k", "text-stream",
         "--results-json", str(results), "--report", str(report)],
        cwd=ROOT, timeout=300)
    assert finished.returncode == 1, finished.stdout[-2000:]
    [row] = [row for row in json.loads(results.read_text())["results"]
             if row["check"] == "schema.responses.event.must" and row["case"] == "responses/text-stream"]
    assert row["outcome"] == "FAILED" and row["level"] == "MUST"
    message = row["message"]
    assert message.startswith("[schema.responses.event.must] ")
    assert "Expected: `/item_id`: present (keyword `required` at responses/events/" in message
    assert re.search(r"Actual:   absent, in \d+ of \d+ events \(.*response\.output_text\.delta", message)
    assert "[response.output_text.delta]" in row["evidence"] or "[response.content_part.added]" in row["evidence"]
    (read,) = [read for read in load_run(results).results if (read.check, read.case) == (row["check"], row["case"])]
    assert read.curl.startswith("curl ") and "Reproduce: curl " in message
    assert "Expected: `/item_id`" in finished.stdout and "keyword `required`" in finished.stdout
    page = html.unescape(report.read_text())
    assert "Expected: `/item_id`: present (keyword `required`" in page
    assert re.search(r"<h5>Reproduce</h5><pre class=\"curl\">curl -sS -N -X POST \S+/v1/responses", page)
