"""The results record as a run writes it and every reader reads it back: each case's curl once, not on each of its
rows; gzip-compressed when its name ends in .gz; and records of older versions, which carried a curl on every row,
read as they always did."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lmconform.cli import main
from lmconform.files import json_text, write_json_atomically
from lmconform.report.run_page import run_page
from lmconform.run import results_record
from lmconform.verdicts.records import RecordError, load_run, results_of

# A curl carries the whole request; a long prompt makes it long.
CURL = "curl -sS -N -X POST http://127.0.0.1:1234/v1/chat/completions --data-binary '" + "lighthouse " * 400 + "'"
EXAMPLE_CURL = "curl -sS -N -X POST http://127.0.0.1:1234/v1/chat/completions --data-binary '{\"n\": 7}'"


def verdict(case: str, check: str, curl: str, outcome: str = "OK") -> dict:
    return {"case": case, "check": check, "kind": "wire", "level": "MUST", "outcome": outcome, "title": check,
            "message": f"[{check}] {check}", "evidence": "", "curl": curl}


ROWS = [*(verdict("chat/long", f"chat.stream.check_{n:02}", CURL) for n in range(40)),
        verdict("chat/fuzz-requests-valid", "http.status.a", CURL),
        verdict("chat/fuzz-requests-valid", "http.status.b", CURL),
        verdict("chat/fuzz-requests-valid", "http.status.c", EXAMPLE_CURL, "FAILED"),  # a generated example's own
        verdict("vscodelm/echo", "vscodelm.turn.x", "")]


def record() -> dict:
    return results_record({"url": "http://127.0.0.1:1234", "label": "lmstudio"}, datetime.now(UTC), 1.0, ROWS)


def test_each_case_s_curl_is_written_once_and_every_row_reads_its_own_back():
    written = record()
    assert json_text(written).count("lighthouse " * 400) == 2  # chat/long's and chat/fuzz-requests-valid's
    assert written["curls"] == {"chat/long": CURL, "chat/fuzz-requests-valid": CURL}
    assert [row["check"] for row in written["results"] if "curl" in row] == ["http.status.c"]
    read = results_of(json.loads(json_text(written)))
    assert [(row.case, row.check, row.curl) for row in read.results] == \
        sorted((row["case"], row["check"], row["curl"]) for row in ROWS)


def test_a_record_with_a_curl_on_every_row_reads_as_it_always_did():
    """Records written before the curls were kept once per case carry one on each row, and no `curls`."""
    written = record()
    older = {**written, "results": sorted(ROWS, key=lambda row: (row["case"], row["check"]))}
    del older["curls"]
    assert results_of(older).results == results_of(written).results
    assert run_page(results_of(older)) == run_page(results_of(written))


def test_a_record_named_gz_is_written_compressed_and_reads_as_the_plain_one(tmp_path: Path):
    plain, compressed = tmp_path / "results.json", tmp_path / "results.json.gz"
    written = record()
    write_json_atomically(plain, written)
    write_json_atomically(compressed, written)
    assert gzip.decompress(compressed.read_bytes()) == plain.read_bytes()
    assert compressed.stat().st_size * 10 < plain.stat().st_size
    write_json_atomically(tmp_path / "again.json.gz", written)
    assert (tmp_path / "again.json.gz").read_bytes() == compressed.read_bytes()  # no time in the gzip header
    # Told apart by their bytes, not their names: a compressed record renamed reads too.
    renamed = compressed.rename(tmp_path / "renamed.json")
    assert load_run(renamed).results == load_run(plain).results == results_of(written).results


def test_a_damaged_compressed_record_is_one_line_naming_it(tmp_path: Path):
    damaged = tmp_path / "results.json.gz"
    damaged.write_bytes(gzip.compress(json_text(record()).encode())[:200])
    with pytest.raises(RecordError, match=r"results\.json\.gz: a damaged gzip file \("):
        load_run(damaged)


@pytest.mark.parametrize("name", ["results.json", "results.json.gz"])
def test_the_report_of_a_record_goes_beside_it_unless_told_where_and_the_command_says_where(tmp_path, capsys, name):
    recorded, written = tmp_path / "run" / name, record()
    write_json_atomically(recorded, written)
    assert main(["report", str(recorded)]) == 0
    page = tmp_path / "run" / "results.html"
    assert capsys.readouterr().out == f"Wrote {page}\n"
    assert page.read_text() == run_page(results_of(written))
    assert main(["report", str(recorded), "-o", str(tmp_path / "elsewhere.html")]) == 0
    assert capsys.readouterr().out == f"Wrote {tmp_path / 'elsewhere.html'}\n"


def test_a_record_whose_name_has_no_json_suffix_is_never_overwritten_by_its_page(tmp_path, capsys):
    recorded = tmp_path / "results.html"  # a record under a page's name: its page must go elsewhere
    write_json_atomically(recorded, record())
    assert main(["report", str(recorded)]) == 0
    assert capsys.readouterr().out == f"Wrote {tmp_path / 'results.html.html'}\n"
    assert load_run(recorded).results == results_of(record()).results
