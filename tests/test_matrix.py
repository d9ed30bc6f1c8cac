"""The matrix page: results records of several runs merged into checks x targets, in HTML and Markdown."""

import argparse
import json
import re
from html.parser import HTMLParser
from itertools import takewhile
from pathlib import Path

import budget
import processes
import pytest

from lmconform.report.commands import register
from lmconform.report.matrix import build_matrix, message_excerpt
from lmconform.report.matrix_html import render_html
from lmconform.report.matrix_markdown import render_markdown
from lmconform.verdicts.records import CaseResult, load_results

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "<script>alert(1)</script>"
ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"
WORST_FIRST = ["ERROR", "FAILED", "NON-STRICT", "INFO", "UNSUPPORTED", "OK"]


def row(case: str, check: str, outcome: str, level: str = "MUST", message: str = "") -> dict:
    return {"case": case, "check": check, "level": level, "outcome": outcome, "title": f"title of {check}",
            "message": message or f"[{check}] title of {check}\nExpected: a\nActual:   b",
            "evidence": "", "curl": f"curl -sS http://127.0.0.1:1234/v1/{case}"}


def record(*rows: dict, label: str = "lmstudio", url: str = "http://127.0.0.1:1234",
           server_version: str | None = "0.3.29") -> dict:
    return {"lmconform": "0.1.0",
            "target": {"url": url, "label": label, "model": "qwen3", "server_version": server_version,
                       "profile": None, "fingerprint": None},
            "started": "2026-11-22T10:00:00Z", "duration_s": 1.0, "results": list(rows)}


def write(directory: Path, name: str, document) -> Path:
    path = directory / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def run_command(*argv: str) -> int:
    """The `matrix` subcommand as `lmconform` runs it, on a parser of its own."""
    parser = argparse.ArgumentParser(prog="lmconform")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["matrix", *argv])
    return args.handler(args)


class PageIndex(HTMLParser):
    """Ids, link targets, the tags used, and per matrix row (`tr` with an id) the classes of its cells."""

    def __init__(self, page: str):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.tags: set[str] = set()
        self.sources: list[str] = []
        self.row_cells: dict[str, list[str]] = {}
        self._row: str | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.add(tag)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if "href" in attributes:
            self.hrefs.append(attributes["href"])
        if "src" in attributes:
            self.sources.append(attributes["src"])
        if tag == "tr":
            self._row = attributes.get("id")
        if tag == "td" and self._row:
            self.row_cells.setdefault(self._row, []).append(attributes["class"])


def assert_links_resolve(index: PageIndex) -> None:
    assert index.hrefs, "the page links nothing"
    for href in index.hrefs:
        assert href.startswith("#") and href[1:] in index.ids, href


# --- aggregation ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("worse, better", list(zip(WORST_FIRST, WORST_FIRST[1:])))
def test_the_worst_outcome_of_a_checks_cases_fills_its_cell(tmp_path, worse, better):
    path = write(tmp_path, "run.json", record(row("chat/a", "chat.stream.x.y", better),
                                              row("chat/b", "chat.stream.x.y", worse),
                                              row("chat/c", "chat.stream.x.y", better)))
    matrix = build_matrix(load_results([path]))
    cell = matrix.cell(matrix.columns[0], matrix.rows[0])
    assert cell.outcome == worse
    assert cell.counts == {better: 2, worse: 1}


def test_a_cell_keeps_the_count_per_outcome_and_the_cases_that_did_not_pass(tmp_path):
    outcomes = {"chat/a": "OK", "chat/b": "FAILED", "chat/c": "ERROR", "chat/d": "UNSUPPORTED", "chat/e": "OK"}
    path = write(tmp_path, "run.json", record(*(row(case, "chat.stream.x.y", outcome)
                                                 for case, outcome in outcomes.items())))
    matrix = build_matrix(load_results([path]))
    cell = matrix.cell(matrix.columns[0], matrix.rows[0])
    assert cell.outcome == "ERROR"
    assert cell.counts == {"OK": 2, "FAILED": 1, "ERROR": 1, "UNSUPPORTED": 1}
    assert cell.not_passed_cases == ["chat/b", "chat/c", "chat/d"]
    assert cell.summary() == "ERROR 1, FAILED 1, UNSUPPORTED 1, OK 2 of 5 cases"



def test_a_stable_page_counts_no_cases_in_its_tooltips_either(tmp_path):
    # How many cases a check judges follows what a real model said (a call or none): a published page leaves it out.
    one = write(tmp_path, "one.json", record(row("chat/a", "chat.stream.x.y", "OK")))
    two = write(tmp_path, "two.json", record(row("chat/a", "chat.stream.x.y", "OK"), row("chat/b", "chat.stream.x.y", "OK")))
    pages = [render_html(build_matrix(load_results([path]), stable=True), "t", "") for path in (one, two)]
    assert pages[0] == pages[1] and " of 1 case" not in pages[0]
    assert " of 2 cases" in render_html(build_matrix(load_results([two])), "t", "")

def test_rows_are_checks_grouped_by_surface_in_a_stable_order(tmp_path):
    checks = ["generation.answer.not_empty", "client.void.tool_call_parsed", "chat.stream.b.c", "http.body.cap",
              "client.openai_python.stream_helper", "chat.finish_reason.x", "zeta.area.property", "sse.framing.x"]
    path = write(tmp_path, "run.json", record(*(row("chat/a", check, "OK") for check in checks)))
    shuffled = write(tmp_path, "shuffled.json", record(*(row("chat/a", check, "OK") for check in reversed(checks))))
    matrix = build_matrix(load_results([path]))
    assert [(row.surface, row.check) for row in matrix.rows] == [
        ("http", "http.body.cap"), ("sse", "sse.framing.x"),
        ("chat", "chat.finish_reason.x"), ("chat", "chat.stream.b.c"),
        ("generation", "generation.answer.not_empty"), ("client.void", "client.void.tool_call_parsed"),
        ("client.openai_python", "client.openai_python.stream_helper"), ("zeta", "zeta.area.property")]
    assert build_matrix(load_results([shuffled])).rows == matrix.rows
    assert [surface for surface, _ in matrix.surfaces()] == [
        "http", "sse", "chat", "generation", "client.void", "client.openai_python", "zeta"]
    assert matrix.rows[0].level == "MUST" and matrix.rows[0].title == "title of http.body.cap"


def test_a_record_without_titles_takes_them_from_the_message_headline(tmp_path):
    untitled = {key: value for key, value in row("chat/a", "chat.stream.x.y", "OK").items() if key != "title"}
    matrix = build_matrix(load_results([write(tmp_path, "run.json", record(untitled))]))
    assert matrix.rows[0].title == "title of chat.stream.x.y"


def test_columns_with_the_same_label_are_told_apart(tmp_path):
    same = dict(label="lmstudio", server_version="0.3.29")
    paths = [write(tmp_path, "a.json", record(row("chat/a", "chat.x.y", "OK"), url="http://alpha:1234", **same)),
             write(tmp_path, "b.json", record(row("chat/a", "chat.x.y", "OK"), url="http://beta:1234", **same)),
             write(tmp_path, "c.json", record(row("chat/a", "chat.x.y", "OK"), label="vllm", server_version=None))]
    names = [column.name for column in build_matrix(load_results(paths)).columns]
    assert names == ["lmstudio 0.3.29 (http://alpha:1234)", "lmstudio 0.3.29 (http://beta:1234)", "vllm"]

    rerun = write(tmp_path, "rerun.json", record(row("chat/a", "chat.x.y", "OK"), url="http://alpha:1234", **same))
    names = [column.name for column in build_matrix(load_results([paths[0], rerun])).columns]
    assert names == ["lmstudio 0.3.29 (a.json)", "lmstudio 0.3.29 (rerun.json)"]

    names = [column.name for column in build_matrix(load_results([paths[0], paths[0]])).columns]
    assert names == ["lmstudio 0.3.29 (#1)", "lmstudio 0.3.29 (#2)"]


def test_two_runs_of_the_embedded_server_are_told_apart_by_their_files_not_its_random_port(tmp_path):
    """The embedded reference server listens on a free loopback port the system picks: two runs of it differ there
    and nowhere else, which tells nobody which is which. The files the user named do."""
    runs = []
    for folder, port in (("before", 36949), ("after", 41233)):
        (tmp_path / folder).mkdir()
        runs.append(write(tmp_path / folder, "results.json", record(
            row("chat/a", "chat.x.y", "OK"), label="reference", server_version=None, url=f"http://127.0.0.1:{port}")))
    matrix = build_matrix(load_results(runs))
    assert [column.name for column in matrix.columns] == ["reference (before/results.json)",
                                                          "reference (after/results.json)"]
    for page in (render_html(matrix), render_markdown(matrix)):
        assert "reference (http://127.0.0.1:" not in page
    # Servers on two hosts, or on one host's loopback at two paths, are told apart by their addresses still.
    elsewhere = write(tmp_path / "after", "other.json", record(row("chat/a", "chat.x.y", "OK"), label="reference",
                                                               server_version=None, url="http://[::1]:1234/proxy"))
    names = [column.name for column in build_matrix(load_results([runs[0], elsewhere])).columns]
    assert names == ["reference (http://127.0.0.1:36949)", "reference (http://[::1]:1234/proxy)"]


# --- rendering --------------------------------------------------------------------------------------------------------

@pytest.fixture
def two_runs(tmp_path):
    """A clean run and a failing one; only the failing one ran `responses.chain.history_used`."""
    clean = record(row("chat/a", "chat.stream.tool_call.index_zero", "OK"),
                   row("chat/b", "chat.stream.tool_call.index_zero", "OK"),
                   label="clean", url="http://clean:1234")
    failing = record(row("chat/a", "chat.stream.tool_call.index_zero", "OK"),
                     row("chat/b", "chat.stream.tool_call.index_zero", "FAILED",
                         message=f"[chat.stream.tool_call.index_zero] t\nExpected: index 0\nActual:   {SCRIPT}"),
                     row("responses/c", "responses.chain.history_used", "NON-STRICT", level="SHOULD"),
                     label="fault|y", url="http://fault:1234")
    return [write(tmp_path, "clean.json", clean), write(tmp_path, "failing.json", failing)]


def test_the_html_page_is_self_contained_and_every_link_reaches_its_detail(two_runs):
    page = render_html(build_matrix(load_results(two_runs)))
    index = PageIndex(page)
    assert_links_resolve(index)
    assert "#t2-chat.stream.tool_call.index_zero" in index.hrefs
    assert "script" not in index.tags and "link" not in index.tags and not index.sources
    assert "<style>" in page and "Legend" in page
    assert index.row_cells["check-chat.stream.tool_call.index_zero"] == ["cell ok", "cell failed"]
    assert index.row_cells["check-responses.chain.history_used"] == ["cell not-run", "cell non-strict"]
    assert 'title="clean 0.3.29: not run"' in page  # labels that differ need no suffix
    detail = page[page.index('id="t2-chat.stream.tool_call.index_zero"'):]
    assert "Expected: index 0" in detail and "curl -sS http://127.0.0.1:1234/v1/chat/b" in detail
    assert "chat/a" not in detail.split("</section>")[0]  # a case that passed is not listed


def test_a_detail_shows_the_first_lines_of_a_message_without_what_the_page_shows_whole():
    failures = [line for n in range(6) for line in (f"Expected: {n}", f"Actual:   {'x' * 1000 if n == 0 else n}")]
    message = "\n".join(["[chat.x.y] the title", "Level: MUST   Outcome: FAILED   Case: chat/a", *failures,
                         "Reproduce: curl -sS http://h/v1", "Reference: https://example.org"])
    excerpt = message_excerpt(CaseResult("chat/a", "chat.x.y", "MUST", "FAILED", "the title", message, "curl"))
    assert excerpt[0] == "Level: MUST   Outcome: FAILED   Case: chat/a"
    assert excerpt[1:3] == ["Expected: 0", "Actual:   " + "x" * 390 + "…"]
    assert len(excerpt) == 9 and excerpt[-1] == "… 6 more lines"
    assert not any(line.startswith(("[chat.x.y]", "Reproduce:")) for line in excerpt)


def test_the_html_header_names_each_target_with_its_counts(two_runs):
    page = render_html(build_matrix(load_results(two_runs)))
    table = page[page.index('id="matrix"'):]
    header = table[table.index("<thead>"):table.index("</thead>")]
    for fact in ("version 0.3.29", "model qwen3", "url http://fault:1234", "fault|y 0.3.29"):
        assert fact in header
    assert "checks: ✓ 1 OK · 1 not run" in header
    assert "checks: ✗ 1 FAILED · ! 1 NON-STRICT" in header


def test_text_from_a_results_file_is_escaped_in_html_and_markdown(tmp_path):
    hostile = record(row(f"chat/{SCRIPT}", f"chat.x.{SCRIPT}", "FAILED", message=f"Actual: {SCRIPT}"),
                     label=SCRIPT, url=f"http://x/{SCRIPT}")
    hostile["target"]["model"] = SCRIPT
    hostile["results"][0]["title"] = SCRIPT
    hostile["results"][0]["curl"] = f"curl '{SCRIPT}'"
    matrix = build_matrix(load_results([write(tmp_path, "hostile.json", hostile)]))
    page = render_html(matrix)
    assert "<script" not in page and ESCAPED_SCRIPT in page
    assert_links_resolve(PageIndex(page))
    markdown = render_markdown(matrix)
    assert "<script" not in markdown and "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown


def test_the_markdown_table_has_symbols_surfaces_legend_and_counts(two_runs):
    markdown = render_markdown(build_matrix(load_results(two_runs)))
    lines = markdown.splitlines()
    assert any(line.startswith("Legend: ⚠ ERROR") and "blank: not run" in line for line in lines)
    assert "| **chat** | |" in markdown and "| **responses** | |" in markdown
    assert "| | clean 0.3.29 | fault\\|y 0.3.29 |" in lines and "| url | http://clean:1234 | http://fault:1234 |" in lines
    assert "| checks | ✓ 1 OK · 1 not run | ✗ 1 FAILED · ! 1 NON-STRICT |" in lines
    matrix_row = next(line for line in lines if line.startswith("| chat.stream.tool\\_call.index\\_zero"))
    assert matrix_row.endswith("| MUST | ✓ | [✗](#t2-chat.stream.tool_call.index_zero) |")
    not_run_row = next(line for line in lines if line.startswith("| responses.chain.history\\_used"))
    assert not_run_row.endswith("| SHOULD |  | [!](#t2-responses.chain.history_used) |")
    assert '<a id="t2-chat.stream.tool_call.index_zero"></a>' in lines
    header = lines.index("| Check | Level | clean 0.3.29 | fault\\|y 0.3.29 |")
    table = list(takewhile(lambda line: line.startswith("|"), lines[header:]))
    assert len(table) == 6 and {len(re.findall(r"(?<!\\)\|", line)) for line in table} == {5}


def test_markdown_cell_text_keeps_its_line_and_its_column(tmp_path):
    titled = row("chat/a", "chat.x.y", "OK")
    titled["title"] = "one | two\nthree"
    markdown = render_markdown(build_matrix(load_results([write(tmp_path, "run.json", record(titled))])))
    assert "| chat.x.y<br>one \\| two<br>three | MUST | ✓ |" in markdown.splitlines()


def test_the_command_writes_html_and_markdown_into_new_directories(two_runs, tmp_path):
    page, markdown = tmp_path / "reports" / "matrix.html", tmp_path / "reports" / "md" / "matrix.md"
    assert run_command(*map(str, two_runs), "-o", str(page), "--markdown", str(markdown)) == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert markdown.read_text().startswith("# lmconform conformance matrix")


# --- bad inputs -------------------------------------------------------------------------------------------------------

def without(document: dict, *path) -> dict:
    container = document
    for key in path[:-1]:
        container = container[key]
    del container[path[-1]]
    return document


BAD_INPUTS = {
    "missing file": (None, "no such file"),
    "not JSON": ("{'results': []", "not JSON"),
    "not an object": ("[1, 2]", "the top level is not an object"),
    "no results": (without(record(), "results"), "the record has no 'results'"),
    "no target": (without(record(), "target"), "the record has no 'target'"),
    "target without label": (without(record(), "target", "label"), "target has no 'label'"),
    "row without outcome": (without(record(row("chat/a", "chat.x.y", "OK")), "results", 0, "outcome"),
                            "results[0] has no 'outcome'"),
    "unknown outcome": (record(row("chat/a", "chat.x.y", "PASS")), "results[0].outcome 'PASS' is not one of"),
    "results not a list": ({**record(), "results": {}}, "'results' is not a list"),
}


@pytest.mark.parametrize("content, problem", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_a_bad_results_file_exits_2_with_one_line_naming_it(tmp_path, capsys, content, problem):
    good = write(tmp_path, "good.json", record(row("chat/a", "chat.x.y", "OK")))
    bad = tmp_path / "bad.json" if content is None else write(tmp_path, "bad.json", content)
    output = tmp_path / "matrix.html"
    assert run_command(str(good), str(bad), "-o", str(output)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"lmconform matrix: {bad}: ") and problem in captured.err
    assert not output.exists()


def test_an_output_that_cannot_be_written_exits_2_with_one_line(two_runs, tmp_path, capsys):
    blocker = write(tmp_path, "blocker", "a file where a directory should be")
    assert run_command(*map(str, two_runs), "-o", str(blocker / "matrix.html")) == 2
    error = capsys.readouterr().err
    assert error.startswith("lmconform matrix: ") and "cannot write" in error and error.count("\n") == 1


# --- with the real suite ----------------------------------------------------------------------------------------------

def run_suite(results: Path, *args: str) -> None:
    command = budget.suite_command("-q", "--checks", "chat.stream.*", "--results-json", str(results),
                                   *budget.case_options(*budget.shown_by("tool-index-one")), *args)
    finished = processes.run(command, cwd=ROOT, timeout=300)
    assert finished.returncode in (0, 1) and results.exists(), finished.stdout[-2000:] + finished.stderr[-2000:]


def test_a_clean_and_a_faulty_run_of_the_suite_side_by_side(tmp_path):
    clean, fault = tmp_path / "clean.json", tmp_path / "fault.json"
    run_suite(clean)
    run_suite(fault, "--reference-fault", "tool-index-one")
    page, markdown = tmp_path / "matrix.html", tmp_path / "matrix.md"
    assert run_command(str(clean), str(fault), "-o", str(page), "--markdown", str(markdown)) == 0

    matrix = build_matrix(load_results([clean, fault]))
    first, second = matrix.columns
    assert first.name != second.name and first.name.startswith("reference") and second.name.startswith("reference")
    assert {row.surface for row in matrix.rows} == {"chat"}
    index_zero = next(row for row in matrix.rows if row.check == "chat.stream.tool_call.index_zero")
    assert matrix.cell(first, index_zero).outcome == "OK"
    assert matrix.cell(second, index_zero).outcome == "FAILED"

    index = PageIndex(page.read_text())
    assert index.row_cells["check-chat.stream.tool_call.index_zero"] == ["cell ok", "cell failed"]
    assert_links_resolve(index)
    assert "[✗](#t2-chat.stream.tool_call.index_zero)" in markdown.read_text()
