"""The HTML report as `make report` writes it: the real suite against the reference server, read as text and in
headless Chromium."""

import html
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from lmconform.report.html import EXCHANGE_BODY_CAP, exchange_text
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest
from lmconform.wire.redact import FILTERED

ROOT = Path(__file__).resolve().parent.parent
CANARY_KEY = "sk-canary-7e3a91c05d"
CANARY_TOKEN = "sk-canary-token-5b2f8c"
ECHOED_SCRIPT = "<script>window.lmconformPwned=1</script>"  # the user text of lmconform/cases/chat/echo-markup.json
ECHOED_IMG = '<img src=x onerror="window.lmconformPwned=2">'
FINDING = "[echo-markup:chat.stream.chunk.id_stable]"  # NON-STRICT under the chunk-id-changes fault
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = ROOT / "reports" / "report-screenshot.png"


@dataclass(frozen=True)
class Rendered:
    path: Path
    text: str
    output: str  # the run's stdout and stderr
    results: list[dict]

    @property
    def data(self) -> dict:
        """pytest-html's browser script builds rows and the environment table from one JSON attribute."""
        blob = re.search(r'data-jsonblob="([^"]*)"', self.text).group(1)
        return json.loads(html.unescape(blob))

    def row(self, test_id_part: str) -> dict:
        [row] = [row for node, rows in self.data["tests"].items() if test_id_part in node for row in rows]
        return row

    def fragments(self) -> list[str]:
        """Every piece of the report that the browser parses as HTML."""
        rows = [row for rows in self.data["tests"].values() for row in rows]
        cells = [cell for row in rows for cell in row["resultsTableRow"]]
        extras = [extra["content"] for row in rows for extra in row["extras"] if extra["format_type"] == "html"]
        return [self.text, *cells, *extras, *map(str, self.data["environment"].values())]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Rendered:
    """One run with a SHOULD finding on every streamed case, a key in the environment and secrets in CI metadata."""
    directory = tmp_path_factory.mktemp("report")
    report, results = directory / "report.html", directory / "results.json"
    env = {**os.environ, "LMCONFORM_API_KEY": CANARY_KEY, "BUILD_URL": f"https://ci:{CANARY_KEY}@ci.example/job/7/"}
    command = [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-p", "no:cacheprovider",
               "-v",  # prints pytest-metadata's table on the terminal too
               "--reference-fault", "chunk-id-changes", "--checks", "chat.stream.chunk.*", "--checks", "client.*",
               "--metadata", "DEPLOY_TOKEN", CANARY_TOKEN, "--results-json", str(results),
               "--html", str(report), "--self-contained-html"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    return Rendered(report, report.read_text(encoding="utf-8"), finished.stdout + finished.stderr,
                    json.loads(results.read_text())["results"])


def test_rows_show_the_lmconform_verdict_beside_pytests(rendered):
    for header in ("Case", "Check id", "Level", "Target", "Outcome"):
        assert f">{header}</th>" in rendered.text
    cells = rendered.row(FINDING)["resultsTableRow"]
    assert '<td class="col-result">Passed</td>' in cells  # pytest's word for a SHOULD finding without --strict
    for cell in ('<td class="col-case">chat/echo-markup</td>', '<td class="col-check">chat.stream.chunk.id_stable</td>',
                 '<td class="col-level">SHOULD</td>', '<td class="col-target">reference</td>',
                 '<td class="col-outcome non-strict">NON-STRICT</td>'):
        assert cell in cells


def test_the_summary_counts_each_outcome_per_surface_as_the_results_record_does(rendered):
    table = ElementTree.fromstring(re.search(r'<table class="lmconform-summary">.*?</table>', rendered.text).group(0))
    outcomes = [th.text.split()[-1] for th in table.find("thead/tr")][1:-1]
    shown = {row[0].text: dict(zip(outcomes, (int(td.text) for td in row[1:-1]))) for row in table.find("tbody")}
    recorded = Counter((row["check"].split(".")[0], row["outcome"]) for row in rendered.results)
    assert set(shown) == {"chat", "client.void", "client.openai_python"}
    assert shown["chat"]["NON-STRICT"] == recorded["chat", "NON-STRICT"] > 0
    assert shown["chat"]["OK"] == recorded["chat", "OK"]
    assert int(table.find("tfoot/tr")[-1].text) == len(rendered.results)


def test_a_finding_opens_onto_expected_actual_evidence_curl_clients_and_the_exchange(rendered):
    [extra] = [extra["content"] for extra in rendered.row(FINDING)["extras"]]
    assert "Expected: " in extra and "Actual: " in extra
    assert "<h4>Offending events</h4>" in extra and "SSE event #" in extra
    assert "<h4>Reproduce</h4>\n<pre>curl -sS -N -X POST" in extra
    assert "<code>client.void.no_error</code>" in extra and "<code>client.openai_python.stream_helper</code>" in extra
    exchange = extra[extra.index("<details>"):]
    assert "HTTP 200" in exchange and "content-type: text/event-stream" in exchange and "data: {" in exchange


def test_the_environment_names_the_target_and_no_secret_reaches_the_report_or_the_terminal(rendered):
    environment = rendered.data["environment"]
    assert environment["Model"] == "lmconform-reference" and environment["Target label"] == "reference"
    assert environment["Target URL"].startswith("http://127.0.0.1:")
    assert environment["BUILD_URL"] == f"https://{FILTERED}@ci.example/job/7/"
    assert "DEPLOY_TOKEN" not in environment
    assert "Authorization: Bearer [Filtered]" in rendered.row(FINDING)["extras"][0]["content"]
    for secret in (CANARY_KEY, CANARY_TOKEN):
        assert secret not in rendered.text and secret not in rendered.output


def test_markup_the_endpoint_echoes_reaches_the_report_only_escaped(rendered):
    [extra] = [extra["content"] for extra in rendered.row(FINDING)["extras"]]
    assert html.escape(ECHOED_SCRIPT) in extra and html.escape(ECHOED_IMG.replace('"', '\\"')) in extra
    for fragment in rendered.fragments():
        assert ECHOED_SCRIPT not in fragment and "<img src=x" not in fragment


def test_the_exchange_shows_the_first_64_kib_of_the_body_without_the_key():
    body = f'{{"echo": "{CANARY_KEY}"}}'.encode() + b"x" * EXCHANGE_BODY_CAP
    request = HttpRequest("POST", "http://127.0.0.1:1/v1/chat/completions", {"Authorization": f"Bearer {FILTERED}"}, {})
    exchange = HttpExchange(request, status=200, headers={"content-type": "application/json"}, chunks=[BodyChunk(0, body)])
    text = exchange_text(exchange, (CANARY_KEY,))
    assert CANARY_KEY not in text and f'{{"echo": "{FILTERED}"}}' in text
    assert f"the report shows the first {EXCHANGE_BODY_CAP} of {len(body)}" in text
    assert len(text) < EXCHANGE_BODY_CAP + 1000


def chromium(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the Makefile's test setup installs it (apt-get install -y chromium); "
                    "run `make test`, or install it the same way")
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'chromium-profile'}", *arguments]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0, finished.stderr[-2000:]
    return finished


def test_in_chromium_the_summary_renders_and_echoed_markup_stays_text(rendered, tmp_path):
    # The virtual time budget lets pytest-html's script build the rows from its JSON before the DOM is dumped:
    # an unescaped echo would then be a live <script> or <img onerror> element in the dump.
    dom = chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", rendered.path.as_uri()).stdout
    assert '<table class="lmconform-summary">' in dom
    assert '<td class="col-outcome non-strict">NON-STRICT</td>' in dom  # rows exist only once the script has run
    assert "lmconform-reference" in dom
    assert html.escape(ECHOED_SCRIPT, quote=False) in dom
    assert ECHOED_SCRIPT not in dom and '<img src="x"' not in dom


def test_in_chromium_the_report_renders_to_a_screenshot(rendered, tmp_path):
    SCREENSHOT.parent.mkdir(exist_ok=True)
    SCREENSHOT.unlink(missing_ok=True)
    chromium(tmp_path, f"--screenshot={SCREENSHOT}", "--window-size=1400,1800", rendered.path.as_uri())
    png = SCREENSHOT.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1400, 1800)
    assert len(png) > 50_000  # a blank or unstyled page compresses to a few kilobytes


def test_in_chromium_the_matrix_of_three_runs_renders_to_a_screenshot(tmp_path):
    # `make matrix` is the documented single command: the clean reference server and two faults as three targets.
    built = subprocess.run(["make", "-s", "matrix"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    matrix = ROOT / "reports" / "matrix.html"
    dom = chromium(tmp_path, "--dump-dom", matrix.as_uri()).stdout
    for label in ("reference", "reference+tool-index-one", "reference+chain-ignored"):
        assert f">{label}<" in dom
    assert "Legend" in dom and "✗" in dom and "✓" in dom
    assert "chat.stream.tool_call.index_zero" in dom and "responses.chain.history_used" in dom
    screenshot = ROOT / "reports" / "matrix-screenshot.png"
    screenshot.unlink(missing_ok=True)
    chromium(tmp_path, f"--screenshot={screenshot}", "--window-size=1400,1600", matrix.as_uri())
    assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and screenshot.stat().st_size > 50_000
