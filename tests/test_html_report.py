"""The HTML report as `make report` writes it: the real suite against the reference server, clean, with a fault and
with faults that break every tool call, read as text and in headless Chromium; and a report of 10,000 verdicts,
opened, filtered and searched there.

The page is built from the results record alone: `lmconform report RESULTS.json` writes the very page the run's
`--report` wrote, and pytest-html, asked for beside it with --html, writes its own page of pytest's tests. What the
page carries packed (the verdict table, the exchanges, the cases of a finding after the first of each cause) is read
unpacked (tests/pages.py), and in Chromium as the page's script unpacks it."""

import html
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import budget
import processes
import pytest
from browser import chromium, evaluate
from pages import packed_parts, unpacked

from lmconform.report.run_page import run_page
from lmconform.report.target_prose import describe
from lmconform.run.exchanges import EXCHANGE_BODY_CAP, exchange_text
from lmconform.surfaces import client_line
from lmconform.verdicts.grades import fragment
from lmconform.verdicts.records import RunTarget, results_of
from lmconform.vocabulary import surface_of
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest
from lmconform.wire.redact import FILTERED

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
CANARY_KEY = "sk-canary-7e3a91c05d"
CANARY_TOKEN = "sk-canary-token-5b2f8c"
ECHOED_SCRIPT = "<script>window.lmconformPwned=1</script>"  # the user text of lmconform/apis/chat/cases/echo-markup.json
ECHOED_IMG = '<img src=x onerror="window.lmconformPwned=2">'
FIRST_SCREEN = (1400, 1000)
# A Python structure or a missing value printed as Python prints it: `('file', 12, 'text')`, `version: None`.
PYTHON_REPR = re.compile(r"\('|\[\(|\bNone\b")
BREAKING = {"FAILED", "ERROR"}
FINDINGS = {"ERROR", "FAILED", "NON-STRICT", "INFO"}
# Faults of the reference server that together break every tool call, each in its own way: a page of their findings
# was 1.4 MB when each case of a finding was written out in it.
BREAKS_TOOL_CALLS = ("tool-index-missing", "arguments-invalid-json", "tool-id-missing", "finish-stop-after-tools",
                     "id-name-repeated")
# Its module fixtures each run the whole suite in a subprocess: one worker sets them up, not each.
pytestmark = pytest.mark.xdist_group("html-report")


@dataclass(frozen=True)
class Rendered:
    path: Path
    text: str
    output: str  # the run's stdout and stderr
    record: dict

    @property
    def results(self) -> list[dict]:
        return self.record["results"]

    @property
    def unpacked(self) -> str:
        return unpacked(self.text)


def run_report(directory: Path, *args: str, env: dict | None = None) -> Rendered:
    report, results = directory / "report.html", directory / "results.json"
    command = budget.suite_command(*args, "--results-json", str(results), "--report", str(report))
    finished = processes.run(command, cwd=ROOT, timeout=600, env=env)
    assert finished.returncode in (0, 1), finished.stdout[-3000:] + finished.stderr[-3000:]
    return Rendered(report, report.read_text(encoding="utf-8"), finished.stdout + finished.stderr,
                    json.loads(results.read_text()))


def pytest_html_environment(page: Path) -> dict:
    """The environment table of pytest-html's page: its browser script builds it from one JSON attribute."""
    blob = re.search(r'data-jsonblob="([^"]*)"', page.read_text(encoding="utf-8")).group(1)
    return json.loads(html.unescape(blob))["environment"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Rendered:
    # In `make check`, with the checks and a case of the surfaces the first screen is tested to name for people.
    return run_report(tmp_path_factory.mktemp("clean"), *budget.suite_options(
        "client.*", "messages.*", "native_chat.*", cases=("native_chat/text-stream",)))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> tuple[Rendered, str]:
    """The whole suite against a server that repeats each tool call's id and name in every delta (as
    llama-cpp-python does); with a CI step summary to append to."""
    directory = tmp_path_factory.mktemp("faulty")
    summary = directory / "step-summary.md"
    summary.write_text("earlier step\n")
    # A Responses stream too, whichever the sample holds: the headline's line of the openai SDK's Responses helper.
    rendered = run_report(directory, "--reference-fault", "id-name-repeated",
                          *budget.suite_options("client.*", "chat.stream.*", "generation.*",
                                                cases=(*budget.shown_by("id-name-repeated"),
                                                       "responses/calculate-tool-stream")),
                          env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)})
    return rendered, summary.read_text()


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Rendered:
    """The whole suite against a server that breaks every tool call, five ways at once."""
    faults = [option for fault in BREAKS_TOOL_CALLS for option in ("--reference-fault", fault)]
    shown = sorted({case for fault in BREAKS_TOOL_CALLS for case in budget.shown_by(fault)})
    return run_report(tmp_path_factory.mktemp("broken"), *faults,
                      *budget.suite_options("client.*", "chat.*", "generation.*", cases=shown))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Rendered:
    """A SHOULD finding on every streamed case, a key in the environment and secrets in CI metadata; pytest-html's
    page of pytest's tests beside lmconform's (pytest.html)."""
    env = {**os.environ, "LMCONFORM_API_KEY": CANARY_KEY, "BUILD_URL": f"https://ci:{CANARY_KEY}@ci.example/job/7/"}
    directory = tmp_path_factory.mktemp("report")
    return run_report(directory, "-v", "--reference-fault", "chunk-id-changes", "--checks", "chat.stream.chunk.*",
                      "--checks", "client.*", *budget.case_options(*budget.shown_by("chunk-id-changes")),
                      "--metadata", "DEPLOY_TOKEN", CANARY_TOKEN,
                      "--html", str(directory / "pytest.html"), "--self-contained-html", env=env)


class Headline(HTMLParser):
    """The rows of the page's "Will it work?" tables: id -> (name, verdict, why, link)."""

    def __init__(self, page: str):
        super().__init__()
        self.rows: dict[str, list] = {}
        self._row: str | None = None
        self._cell: str | None = None
        self.feed(page[page.index('id="will-it-work"'):page.index('id="target"')])

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "tr" and attributes.get("id"):
            self._row = attributes["id"]
            self.rows[self._row] = ["", "", "", None]
        elif self._row and tag in ("th", "td"):
            self._cell = {"th": "name", "td": attributes.get("class", "")}[tag]
        elif self._row and tag == "a":
            self.rows[self._row][3] = attributes["href"]

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None

    def handle_data(self, data):
        if not self._row:
            return
        slot = 0 if self._cell == "name" else 1 if self._cell.startswith("status") else 2 if self._cell == "why" \
            else None
        if slot is not None:
            self.rows[self._row][slot] += data


def expected_clients(results: list[dict]) -> dict[str, str]:
    """Client name -> the last word of its grade, worked out from the results record alone: a client breaks when one
    of its verdicts is FAILED or ERROR on any case, works with limits when one is NON-STRICT, works otherwise."""
    cases: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for row in results:
        if row["kind"] == "client":
            api = row["case"].split("/")[0]
            cases[client_line(surface_of(row["check"]), api)][row["case"]].add(row["outcome"])
    status = {}
    for name, outcomes in cases.items():
        seen = set().union(*outcomes.values())
        status[name] = "breaks" if seen & BREAKING else "limits" if "NON-STRICT" in seen else "works"
    return status


def test_the_report_opens_with_a_verdict_per_client_that_the_results_record_bears_out(clean, faulty):
    for rendered in (clean, faulty[0]):
        rows = Headline(rendered.text).rows
        shown = {name: verdict.split()[-1] for key, (name, verdict, _, _) in rows.items() if key.startswith("client-")}
        assert shown == expected_clients(rendered.results)
    assert set(expected_clients(clean.results).values()) == {"works"}
    assert len(expected_clients(clean.results)) >= 3  # Void, and the openai SDK's chat and Responses helpers


def test_the_first_screen_names_clients_and_surfaces_for_people(clean):
    names = {name for name, _, _, _ in Headline(clean.text).rows.values()}
    assert {"anthropic SDK for Python · Anthropic Messages", "Anthropic Messages", "LM Studio native chat",
            "Schemas"} <= names
    assert not {"client.anthropic_python · Anthropic Messages", "messages", "native_chat", "schema"} & names


def test_each_line_that_does_not_simply_work_gives_its_worst_findings_reason_and_links_to_it(faulty):
    rendered, _ = faulty
    rows = Headline(rendered.text).rows
    name, verdict, why, link = rows["client-void-chat"]
    assert (name, verdict) == ("Void · Chat completions", "✗ breaks")  # on every streamed tool call, not on text
    assert why.startswith("Void reads the first tool call") and "Void reads 'set_light" in why
    assert link == "#finding-client-void-tool-call-parsed" and 'id="finding-client-void-tool-call-parsed"' in rendered.text
    assert rows["client-openai-python-responses"][1] == "✓ works" and not rows["client-openai-python-responses"][2]
    assert rows["surface-tool-calls"][1] == "✗ breaks" and rows["surface-chat-completions"][1] == "✓ works"
    charts = rendered.text[rendered.text.index('id="will-it-work"'):rendered.text.index('id="target"')]
    assert charts.count("<svg") == len(rows) and "http://www.w3.org/2000/svg" in charts and "<title>" in charts


def test_the_same_headline_ends_the_terminal_output_and_a_github_step_summary(faulty):
    rendered, summary = faulty
    terminal = rendered.output[rendered.output.index("lmconform: will it work?"):]
    assert re.search(r"Void · Chat completions\s+✗ breaks\n    Void reads the first tool call", terminal)
    assert re.search(r"openai SDK for Python · Responses\s+✓ works", terminal)
    failed = sum(row["outcome"] == "FAILED" for row in rendered.results)
    assert failed and f"{failed} FAILED" in terminal and "had nothing to judge" in terminal
    assert summary.startswith("earlier step\n### lmconform: will it work with reference?\n")
    assert "| Void · Chat completions | ✗ breaks | Void reads the first tool call" in summary
    assert "| openai SDK for Python · Responses | ✓ works |  |" in summary


def test_findings_are_grouped_by_check_with_the_evidence_curl_clients_and_exchange(faulty):
    rendered, _ = faulty
    text = rendered.text
    finding = text[text.index('id="finding-client-void-tool-call-parsed"'):]
    finding = finding[:finding.index("</details>\n")]
    failed = {row["case"] for row in rendered.results
              if row["check"] == "client.void.tool_call_parsed" and row["outcome"] == "FAILED"}
    judged = sum(row["check"] == "client.void.tool_call_parsed" for row in rendered.results)
    assert f"MUST</span> · {len(failed)} of {judged} cases" in finding
    assert "<h5>Expected / Actual</h5>" in finding and "Expected: tool name" in finding
    assert "<h5>Offending events</h5>" in finding and "SSE event #" in finding
    assert '<h5>Reproduce</h5><pre class="curl">curl -sS -N -X POST' in finding
    assert "What the clients make of the same answer" in finding and "client.openai_python.stream_helper" in finding
    case = sorted(failed)[0]
    assert f'href="#exchange-{re.sub("[^a-z0-9]", "-", case)}"' in finding
    whole = rendered.unpacked
    exchange = whole[whole.index(f'id="exchange-{re.sub("[^a-z0-9]", "-", case)}"'):]
    assert "HTTP 200" in exchange[:5000] and "content-type: text/event-stream" in exchange[:5000]


def test_the_cases_of_a_finding_are_grouped_by_cause_each_cause_once_with_its_first_case_whole():
    def row(case: str, expected: str, actual: str) -> dict:
        return {"case": case, "check": "generation.tool_call.name_once", "kind": "wire", "level": "MUST",
                "outcome": "FAILED", "title": "the name is sent once", "curl": f"curl -d {case}",
                "message": f"[generation.tool_call.name_once] the name is sent once\nLevel: MUST\n"
                           f"Expected: {expected}\nActual:   {actual}"}

    rows = [row("chat/a", "the name 'set_light' once", "sent 4 times"),
            row("chat/b", "the name 'get_weather' once", "sent 6 times"),
            row("chat/c", "the name 'get_weather' once", "sent 2 times"),
            row("chat/d", "a tool call", "none")]
    page = run_page(results_of({"target": {"url": "http://x", "label": "x"}, "results": rows}))
    findings = page[page.index('id="findings"'):page.index('id="verdicts"')]
    assert "4 of 4 cases (4 FAILED), 2 causes</summary>" in findings
    # What the cases of a cause share is said once; what varies between them is left out.
    assert "<b>3 cases</b> · Expected: the name … once · Actual: sent … times</p>" in findings
    assert "<b>1 case</b> · Expected: a tool call · Actual: none</p>" in findings
    assert findings.count("<h5>Expected / Actual</h5>") == 2 and "curl -d chat/a" in findings
    assert "2 more cases of this cause" in findings and "curl -d chat/b" not in findings
    whole = unpacked(page)
    assert whole.count("<h5>Expected / Actual</h5>") == 4 and "curl -d chat/b" in whole and "curl -d chat/c" in whole


VERDICT_ROW = re.compile(r'<div class="(ok|failed|non-strict|info|unsupported|error)"><span>')


def passing_page(rendered: Rendered) -> str:
    """The page of a run's record with only its passing verdicts: a server where nothing was found. (The reference
    server's one finding, its dialect's known limit, comes with its recorded Codex case, which make check's sample
    of cases may leave out.)"""
    record = {**rendered.record, "results": [row for row in rendered.record["results"] if row["outcome"] == "OK"]}
    return run_page(results_of(record, rendered.path))


def test_what_passed_is_folded_and_what_had_nothing_to_judge_is_no_row(clean, faulty):
    assert '<details class="lmc-folded" id="passed">' in clean.text  # closed
    assert all(row["expected"]["file"].startswith("lmconform/verdicts/causes.toml#") for row in clean.results
               if row["outcome"] != "OK")
    passing = passing_page(clean)
    assert "No finding: every check held on every case it judged." in passing
    assert "nothing to judge" in clean.output and "had nothing to judge in the answer" in clean.text
    for rendered in (clean, faulty[0]):
        assert not VERDICT_ROW.search(rendered.text)  # packed, the page's script unpacks them
        assert len(VERDICT_ROW.findall(rendered.unpacked)) == len(rendered.results)
        assert f"{rendered.record['nothing_to_judge']} further case and check pairs had nothing" in rendered.text
    # The table opens on the findings, the passes hidden until ticked; on every verdict where nothing was found.
    assert 'id="lmc-verdicts" class="hide-unsupported hide-ok"' in faulty[0].text
    assert 'data-outcome="ok">' in faulty[0].text and 'data-outcome="failed" checked>' in faulty[0].text
    assert 'id="lmc-verdicts" class=""' in passing and 'data-outcome="ok" checked>' in passing


def visible_text(fragment: str) -> str:
    """What a reader sees of an HTML fragment: no script, no style, no tags, entities resolved."""
    fragment = re.sub(r"<(script|style)\b.*?</\1>", "", fragment, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


def test_no_text_of_the_page_is_a_python_repr(clean, faulty, rendered):
    for report in (clean, faulty[0], rendered):
        for line in visible_text(report.unpacked).splitlines():
            assert not PYTHON_REPR.search(line), line[:300]


def test_the_target_reads_as_prose(clean):
    target = clean.text[clean.text.index('id="target"'):clean.text.index('id="findings"')]
    assert re.search(r"<p>The target is lmconform&#x27;s reference server \(LM Studio-like\), version lmconform "
                     r"[0-9.]+, at http://127\.0\.0\.1:\d+, serving the model lmconform-reference\.</p>", target)
    assert "<code>GET /v1/models lists lmconform-reference</code>" in target


@pytest.mark.parametrize(("label", "url", "sentence"), [
    ("reference", "", "The target is"), ("localhost:1234", "http://localhost:1234", "The target is"),
    ("my proxy", "http://localhost:4000", "my proxy is")])
def test_a_sentence_names_the_target_by_the_name_it_was_given_else_as_the_target(label, url, sentence):
    # The default label (the address, or "reference") at the head of a sentence read as a typo.
    prose = describe(RunTarget(url=url, label=label, fingerprint={"kind": "lmstudio"}))
    assert prose.sentence.startswith(f"{sentence} LM Studio")


def test_a_clean_report_weighs_under_a_megabyte(clean):
    size = clean.path.stat().st_size
    print(f"a clean run's report: {size / 1e6:.2f} MB for {len(clean.results)} verdicts")
    assert size < 1_000_000


def test_lmconform_report_builds_the_runs_very_page_from_its_record(faulty, broken, tmp_path):
    for rendered in (faulty[0], broken):
        built = tmp_path / "again.html"
        command = [sys.executable, "-m", "lmconform.cli", "report", str(rendered.path.with_name("results.json")),
                   "-o", str(built)]
        finished = processes.run(command, cwd=ROOT, timeout=120)
        assert finished.returncode == 0, finished.stderr
        assert built.read_bytes() == rendered.path.read_bytes()
        assert rendered.record["exchanges"] and set(rendered.record["exchanges"]) <= {row["case"] for row in
                                                                                       rendered.results}


def test_a_server_that_breaks_every_tool_call_gets_a_page_under_a_megabyte_that_loses_nothing(broken):
    size = broken.path.stat().st_size
    findings = [row for row in broken.results if row["outcome"] in FINDINGS]
    print(f"a report of {len(findings)} findings among {len(broken.results)} verdicts: {size / 1e6:.2f} MB, "
          f"{len(broken.unpacked.encode()) / 1e6:.2f} MB unpacked")
    assert size < 1_000_000 and len(findings) >= 20
    whole = broken.unpacked
    assert len(VERDICT_ROW.findall(whole)) == len(broken.results)
    for case, text in broken.record["exchanges"].items():
        assert f'id="exchange-{re.sub("[^a-z0-9]", "-", case)}"' in broken.text and html.escape(text) in whole
    # Each cause of a finding once, its first case whole; every other case's story is packed, a click away.
    found = {row["check"] for row in findings}
    told = [row for row in broken.results if row["check"] in found and row["outcome"] != "OK"]
    shown_whole = broken.text.count("<h5>Expected / Actual</h5>")
    assert 0 < shown_whole < len(told) and whole.count("<h5>Expected / Actual</h5>") == len(told)
    for row in told:
        anchor = f'id="finding-{fragment(row["check"])}--{fragment(row["case"])}"'
        assert anchor in whole, anchor


def test_a_record_that_cannot_be_read_is_one_line_and_exit_status_2(tmp_path):
    (tmp_path / "broken.json").write_text('{"target": {"url": "x", "label": "x"}, "results": [], "exchanges": [1]}')
    for record, complaint in (("missing.json", "no such file"), ("broken.json", "'exchanges' is not an object")):
        finished = processes.run([sys.executable, "-m", "lmconform.cli", "report", str(tmp_path / record), "-o",
                                  str(tmp_path / "page.html")], timeout=120)
        assert finished.returncode == 2 and complaint in finished.stderr, finished.stderr
        assert len(finished.stderr.splitlines()) == 1 and not (tmp_path / "page.html").exists()


def test_no_secret_reaches_either_page_or_the_terminal(rendered):
    environment = pytest_html_environment(rendered.path.with_name("pytest.html"))
    assert environment["BUILD_URL"] == f"https://{FILTERED}@ci.example/job/7/"
    assert "DEPLOY_TOKEN" not in environment
    whole = rendered.unpacked
    exchanges = whole[whole.index('id="exchanges"'):]
    assert "Authorization: Bearer [Filtered]" in exchanges
    pytest_page = rendered.path.with_name("pytest.html").read_text(encoding="utf-8")
    for secret in (CANARY_KEY, CANARY_TOKEN):
        assert secret not in whole and secret not in rendered.text
        assert secret not in rendered.output and secret not in pytest_page


def test_markup_the_endpoint_echoes_reaches_the_report_only_escaped(rendered):
    whole = rendered.unpacked
    assert html.escape(ECHOED_SCRIPT) in whole
    assert ECHOED_SCRIPT not in whole and "<img src=x" not in whole
    assert all(ECHOED_SCRIPT not in part and "<img src=x" not in part for part in packed_parts(rendered.text))


def test_the_exchange_shows_the_first_64_kib_of_the_body_without_the_key():
    body = f'{{"echo": "{CANARY_KEY}"}}'.encode() + b"x" * EXCHANGE_BODY_CAP
    request = HttpRequest("POST", "http://127.0.0.1:1/v1/chat/completions", {"Authorization": f"Bearer {FILTERED}"}, {})
    exchange = HttpExchange(request, status=200, headers={"content-type": "application/json"}, chunks=[BodyChunk(0, body)])
    text = exchange_text(exchange, (CANARY_KEY,))
    assert CANARY_KEY not in text and f'{{"echo": "{FILTERED}"}}' in text
    assert f"the record keeps the first {EXCHANGE_BODY_CAP} of {len(body)}" in text
    assert len(text) < EXCHANGE_BODY_CAP + 1000


# --- in Chromium ------------------------------------------------------------------------------------------------------

# What a probe may call: `until(condition)` waits until it holds; `settled(element)` until every part in sight within
# it is unpacked (the page's script unpacks them once loaded, and when a <details> is opened); `opened(details)` opens
# one and waits for what it unpacks; `timed(work)` gives the milliseconds `work()` took.
PROBE_HELPERS = """
function until(condition) {
  return new Promise(function (resolve) {
    (function poll() { if (condition()) { resolve(); } else { setTimeout(poll, 5); } })();
  });
}
function settled(within) {
  return until(function () {
    return !Array.prototype.some.call(within.querySelectorAll('[data-lmc-part][aria-busy]'), function (holder) {
      return !holder.parentElement.closest('details:not([open])');
    });
  });
}
function opened(details) { details.open = true; return settled(details); }
function timed(work) { var start = performance.now(); work(); return Math.round(performance.now() - start); }
"""


def probed(tmp_path: Path, page: Path, script: str, size: tuple[int, int] = FIRST_SCREEN) -> tuple[dict, str]:
    """Run `script` in the page once it has loaded and unpacked what it shows at first (`script` sets `out`, and may
    `await` PROBE_HELPERS; `ready_ms` is when the page was so far, from the moment it was asked for); what it found,
    and the page's DOM after it."""
    found = evaluate(page, "(async function () {\n" + PROBE_HELPERS + "var out = {};\nawait settled(document);\n"
                     "var ready_ms = Math.round(performance.now());\n" + script
                     + "\nreturn {out: out, dom: document.documentElement.outerHTML}; })()",
                     tmp_path / "chromium-profile", size)
    return found["out"], found["dom"]


def measured(tmp_path: Path, page: Path, script: str, size: tuple[int, int] = FIRST_SCREEN) -> dict:
    return probed(tmp_path, page, script, size)[0]


ON_FIRST_SCREEN = """
function place(selector) {
  var element = document.querySelector(selector);
  if (!element) { return null; }
  var box = element.getBoundingClientRect();
  return {bottom: Math.round(box.bottom), text: element.textContent};
}
out.height = window.innerHeight;
out.void = place('#client-void-chat');
out.why = place('#client-void-chat td.why a');
out.finding = place('#findings');
"""


def screenshot(tmp_path: Path, page: Path, name: str) -> Path:
    path = REPORTS / name
    REPORTS.mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    chromium(tmp_path, f"--screenshot={path}", f"--window-size={FIRST_SCREEN[0]},{FIRST_SCREEN[1]}", page.as_uri())
    png = path.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == FIRST_SCREEN
    assert len(png) > 50_000  # a blank or unstyled page compresses to a few kilobytes
    return path


@pytest.mark.browser
def test_in_chromium_the_first_screen_of_a_faulty_servers_report_shows_each_client_and_the_reason(faulty, tmp_path):
    rendered, _ = faulty
    found = measured(tmp_path, rendered.path, ON_FIRST_SCREEN)
    assert found["void"]["bottom"] <= found["height"] and "✗ breaks" in found["void"]["text"]
    assert found["why"]["bottom"] <= found["height"] and "Void reads 'set_light" in found["why"]["text"]
    print(f"screenshot: {screenshot(tmp_path, rendered.path, 'report-faulty.png')}")


@pytest.mark.browser
def test_in_chromium_the_first_screen_of_a_clean_report_says_every_client_works(clean, tmp_path):
    found = measured(tmp_path, clean.path, ON_FIRST_SCREEN + """
out.statuses = Array.prototype.map.call(document.querySelectorAll('.lmc-answer td.status'), function (cell) {
  return cell.textContent; });
""")
    assert found["void"]["bottom"] <= found["height"] and "✓ works" in found["void"]["text"]
    # Every client works, the coding agents as their profiles predict (the reference server takes Codex's tool types
    # as OpenAI does).
    assert sorted(found["statuses"]) == sorted(["✓ works"] * (len(found["statuses"]) - 3) + [
        "✓ works (predicted)"] * 3)
    print(f"screenshot: {screenshot(tmp_path, clean.path, 'report-clean.png')}")


OPEN_EVERYTHING = """
for (var round = 0; round < 5; round++) {
  var closed = document.querySelectorAll('details:not([open])');
  for (var i = 0; i < closed.length; i++) { closed[i].open = true; }
  await settled(document);
}
out.busy = document.querySelectorAll('[aria-busy]').length;
out.pwned = window.lmconformPwned || 0;
"""


@pytest.mark.browser
def test_in_chromium_echoed_markup_stays_text(rendered, tmp_path):
    # Every <details> opened, so every packed part is unpacked by the page's script: an unescaped echo would then be
    # a live <script> or <img onerror> element in the dumped DOM, and would have run.
    found, dom = probed(tmp_path, rendered.path, OPEN_EVERYTHING)
    assert found == {"busy": 0, "pwned": 0}
    assert 'id="will-it-work"' in dom and '<div class="non-strict"><span>! NON-STRICT</span>' in dom
    assert html.escape(ECHOED_SCRIPT, quote=False) in dom
    assert ECHOED_SCRIPT not in dom and '<img src="x"' not in dom


SHOWN_ROWS = """
function shown() {
  var rows = document.querySelectorAll('#lmc-verdicts > div:not(.head)'), classes = {};
  for (var i = 0; i < rows.length; i++) {
    if (getComputedStyle(rows[i]).display !== 'none') {
      classes[rows[i].className] = (classes[rows[i].className] || 0) + 1;
    }
  }
  return {said: document.getElementById('lmc-shown').textContent, classes: classes};
}
out.at_first = shown();
var ok = document.querySelector('#verdicts input[data-outcome="ok"]');
ok.checked = !ok.checked; ok.dispatchEvent(new Event('change'));
out.ok_ticked = shown();
"""


@pytest.mark.browser
def test_in_chromium_every_verdict_opens_on_the_findings(faulty, clean, tmp_path):
    rendered, _ = faulty
    found = measured(tmp_path, rendered.path, SHOWN_ROWS)
    total = len(rendered.results)
    outcomes = Counter(row["outcome"] for row in rendered.results)
    findings = sum(outcomes[outcome] for outcome in FINDINGS)
    assert findings and found["at_first"]["said"] == f"{findings} of {total} verdicts shown"
    assert found["at_first"]["classes"] == {outcome.lower(): outcomes[outcome] for outcome in FINDINGS
                                           if outcomes[outcome]}
    assert found["ok_ticked"]["said"] == f"{findings + outcomes['OK']} of {total} verdicts shown"
    # The reference server finds nothing: the table opens on every verdict.
    found = measured(tmp_path, clean.path, SHOWN_ROWS)
    assert found["at_first"]["said"] == f"{len(clean.results)} of {len(clean.results)} verdicts shown"
    # Where nothing was found, every verdict at once (and the OK box unticks them).
    passing = {**clean.record, "results": [row for row in clean.record["results"] if row["outcome"] == "OK"]}
    page = tmp_path / "passing.html"
    page.write_text(run_page(results_of(passing, page)), encoding="utf-8")
    found = measured(tmp_path, page, SHOWN_ROWS)
    assert found["at_first"]["said"] == f"{len(passing['results'])} of {len(passing['results'])} verdicts shown"
    assert found["ok_ticked"]["said"] == f"0 of {len(passing['results'])} verdicts shown"


OTHER_CASES = """
var more = document.querySelector('#findings details.lmc-more');
out.head = more.closest('.lmc-cause').querySelector('.lmc-cause-head').textContent;
out.summary = more.querySelector('summary').textContent;
out.before = more.querySelectorAll('details.lmc-case').length;
await opened(more);
var cases = more.querySelectorAll('details.lmc-case');
out.cases = cases.length;
out.folded_story = cases[0].querySelector('h5') === null;
await opened(cases[0]);
out.id = cases[0].id;
out.story = cases[0].textContent;
"""


@pytest.mark.browser
def test_in_chromium_a_causes_other_cases_are_a_click_away(broken, tmp_path):
    found = measured(tmp_path, broken.path, OTHER_CASES)
    others = int(found["summary"].split()[0])
    assert found["summary"] == f"{others} more case{'s' if others != 1 else ''} of this cause"
    assert found["head"].startswith(f"{others + 1} cases · Expected: ")
    assert found["before"] == 0 and found["cases"] == others and found["folded_story"]
    assert "Expected / Actual" in found["story"] and "Reproduce" in found["story"] and "curl -sS" in found["story"]
    told = {f"finding-{fragment(row['check'])}--{fragment(row['case'])}" for row in broken.results
            if row["outcome"] in FINDINGS}
    assert found["id"] in told


AN_EXCHANGE = """
var link = document.querySelector('#findings a[href^="#exchange-"]');
out.href = link.getAttribute('href');
var target = document.getElementById(out.href.slice(1));
out.case = target.querySelector('summary').textContent;
out.before = target.querySelector('pre').textContent;
link.click();
await until(function () { return target.open; });
await settled(target);
out.text = target.querySelector('pre').textContent;
"""


@pytest.mark.browser
def test_in_chromium_an_exchange_is_unpacked_when_a_finding_links_to_it(broken, tmp_path):
    found = measured(tmp_path, broken.path, AN_EXCHANGE)
    assert found["href"] == f"#exchange-{fragment(found['case'])}" and found["before"] == "Unpacking…"
    assert found["text"] == broken.record["exchanges"][found["case"]]
    assert found["text"].startswith("POST http://127.0.0.1:") and "\nHTTP 200\n" in found["text"]


FILTER_AND_SEARCH = """
function shown() { return document.getElementById('lmc-shown').textContent; }
document.body.offsetHeight;
out.ready_ms = ready_ms;
out.rows = document.querySelectorAll('#lmc-verdicts > div:not(.head)').length;
out.at_first = shown();
var ok = document.querySelector('#verdicts input[data-outcome="ok"]');
out.tick_ms = timed(function () {
  ok.checked = true; ok.dispatchEvent(new Event('change')); document.body.offsetHeight;
});
out.with_ok = shown();
var search = document.getElementById('lmc-search');
out.search_ms = timed(function () {
  search.value = 'chat/case-0042'; search.dispatchEvent(new Event('search')); document.body.offsetHeight;
});
out.searched = shown();
var failed = document.querySelector('#verdicts input[data-outcome="failed"]');
failed.checked = false; failed.dispatchEvent(new Event('change'));
out.searched_without_failed = shown();
"""


@pytest.mark.browser
def test_in_chromium_a_report_of_10000_verdicts_opens_and_filters_and_searches(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                                         os.environ.get("PYTHONPATH", "")])}
    report, results = tmp_path / "report.html", tmp_path / "results.json"
    started = time.monotonic()
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "tests" / "many_verdicts.py"), "-p", "lmconform.plugin",
         "-p", "many_verdicts", "-p", "no:cacheprovider", "-q", "--tb=no", "-o", "python_files=many_verdicts.py", "--results-json",
         str(results), "--report", str(report)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    assert finished.returncode == 1, finished.stdout[-2000:] + finished.stderr[-2000:]
    written = time.monotonic() - started
    rows = json.loads(results.read_text())["results"]
    assert len(rows) == 10_000
    found = measured(tmp_path, report, FILTER_AND_SEARCH)
    not_ok = sum(row["outcome"] != "OK" for row in rows)
    case_42 = [row for row in rows if row["case"] == "chat/case-0042"]
    assert found["rows"] == 10_000 and found["at_first"] == f"{not_ok} of 10000 verdicts shown"
    assert found["with_ok"] == "10000 of 10000 verdicts shown"
    assert found["searched"] == f"{len(case_42)} of 10000 verdicts shown"
    kept = sum(row["outcome"] != "FAILED" for row in case_42)
    assert found["searched_without_failed"] == f"{kept} of 10000 verdicts shown"
    print(f"10,000 verdicts: the run and its report took {written:.0f} s; the report is "
          f"{report.stat().st_size / 1e6:.1f} MB; Chromium opened it (parse, unpacking, scripts, layout) in "
          f"{found['ready_ms']} ms, showed all 10,000 rows in {found['tick_ms']} ms and searched them in "
          f"{found['search_ms']} ms")


@pytest.mark.browser
def test_in_chromium_the_matrix_of_three_runs_renders_to_a_screenshot(tmp_path):
    # `make matrix` is the documented single command: the clean reference server and two faults as three targets.
    built = subprocess.run(["make", "-s", "matrix"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    matrix = REPORTS / "matrix.html"
    dom = chromium(tmp_path, "--dump-dom", matrix.as_uri()).stdout
    for label in ("reference", "reference+tool-index-one", "reference+chain-ignored"):
        assert f">{label}<" in dom
    assert "Will it work?" in dom and "Legend" in dom and "✗" in dom and "✓" in dom
    assert "chat.stream.tool_call.index_zero" in dom and "responses.chain.history_used" in dom
    screenshot = REPORTS / "matrix-screenshot.png"
    screenshot.unlink(missing_ok=True)
    chromium(tmp_path, f"--screenshot={screenshot}", "--window-size=1400,1600", matrix.as_uri())
    assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and screenshot.stat().st_size > 50_000
