"""Property two: a proxy is transparent. Generated answers of the reference server sent through a proxy and
straight to the server must reach the client alike, and the proxy's stream must pass the checks the server's
passes. Proxies written for the test (tests/faulty_proxies.py) each have one defect a real proxy has had;
each is caught, and its finding shrinks to the framing that causes it. A correct re-framing proxy is the control.

The reference server pauses nowhere here, neither after split writes nor in a drip: these proxies read with httpx,
whose HTTP/1.1 reader hands over each chunk the server wrote on its own, whatever the timing. A close-delimited body
has no chunks, and that server sends it in one write (its form says so), so that a finding shrinks alike on a busy
machine.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import budget
import processes
import pytest
from faulty_proxies import running_proxy

from lmconform.cli import main
from lmconform.fuzz import streams
from lmconform.reference import ReferenceServer
from lmconform.reference.streams import FEATURES, Form
from lmconform.reference.streams.form import LINE_ENDS, TRANSPORT
from lmconform.run.transparency import StreamFuzz, StreamRow, fuzz_streams, load_expected, stream_differences
from lmconform.target import Target
from lmconform.wire.http import send

# The proxies' fuzzed streams are a module fixture of over a minute: one worker sets it up, not each.
pytestmark = pytest.mark.xdist_group("stream-fuzz")
# 12 of each API; 6 in make check (tests/budget.py), which still find each proxy's defect alone and shrink it, and
# take every feature through the correct proxy.
EXAMPLES = 12 if budget.CHECK else 24
GATE_EXAMPLES = 8 if budget.CHECK else 16  # of the gate's runs that must find a proxy's change among legal streams
SHOWN_EXAMPLES = GATE_EXAMPLES // 2  # of those about what it prints and compares, with a proxy whose change is common
WRITES = {"split-utf8", "split-anywhere", "one-byte-writes"}
LINE_ENDS_SHOWN = {name: FEATURES[name].shows for name in LINE_ENDS}


@pytest.fixture(scope="module")
def upstream():
    with ReferenceServer(stream_pause=0) as running:
        yield running


def fuzzed(upstream, name: str, examples: int = EXAMPLES) -> tuple[str, StreamFuzz]:
    with running_proxy(upstream.base_url, name) as proxy:
        return proxy, fuzz_streams(Target(proxy, model="m"), Target(upstream.base_url, model="m"), examples)


@pytest.fixture(scope="module")
def found(upstream):
    return {name: fuzzed(upstream, name)[1] for name in ("correct", "lf-only", "per-read-utf8", "merges-at-comments")}


def alone(result: StreamFuzz, feature: str) -> list[StreamRow]:
    return [row for row in result.rows if row.features == (feature,)]


def test_a_correct_reframing_proxy_changes_nothing_a_client_sees(found):
    result = found["correct"]
    assert result.rows == () and result.played == EXAMPLES
    assert {"crlf", "cr", "comments", "ids", "split-utf8", "fragments", "extra-keys"} <= result.preserved
    # The transport's legal forms too: a drip, a gzip-encoded stream and a close-delimited body reach the proxy,
    # which must pass each on as a stream a client reads alike.
    assert set(TRANSPORT) <= result.preserved


def test_a_proxy_that_ends_lines_at_lf_only_is_caught_and_shrunk_to_the_line_ends(found):
    result = found["lf-only"]
    assert result.rows and all(set(row.features) & set(LINE_ENDS_SHOWN) for row in result.rows)
    single = [row for name in LINE_ENDS_SHOWN for row in alone(result, name)]
    assert single and all(row.cause == LINE_ENDS_SHOWN[row.features[0]] for row in single)
    assert any("proxy.diff.generation_preserved" in key for row in single for key in row.findings)
    assert not set(LINE_ENDS_SHOWN) & result.preserved


def test_a_proxy_that_decodes_each_read_alone_is_caught_and_shrunk_to_a_character_split_across_writes(found):
    result = found["per-read-utf8"]
    assert result.rows and all(set(row.features) & WRITES for row in result.rows)
    split = alone(result, "split-utf8")
    assert split and all(row.cause.endswith("split across writes") and "-byte character" in row.cause for row in split)
    assert {"crlf", "cr", "comments", "multiline-data"} <= result.preserved


def test_a_proxy_that_merges_events_at_comment_lines_is_caught_and_shrunk_to_the_comments(found):
    result = found["merges-at-comments"]
    assert result.rows and all("comments" in row.features for row in result.rows)
    (row, *_) = alone(result, "comments")
    assert row.cause == "comment lines in and between events" and "sse.framing.data_is_json" in row.findings
    assert "keep-alives" in result.preserved


def test_a_finding_is_replayed_exactly_by_its_request(upstream):
    with running_proxy(upstream.base_url, "merges-at-comments") as proxy:
        result = fuzz_streams(Target(proxy, model="m"), Target(upstream.base_url, model="m"), 6, apis=("chat",))
        row = alone(result, "comments")[0]
        assert row.replay.startswith(f"curl -sS -N -X POST {proxy}/v1/chat/completions")
        assert "lmconform-stream=" in row.replay and ":comments" in row.replay
        body = __import__("json").loads(row.replay.split("--data-binary '", 1)[1].rsplit("'", 1)[0])
        again = send(Target(proxy), "POST", "/v1/chat/completions", body)
        assert again.headers.get("content-type", "").startswith("text/event-stream")
        assert any(not _json(event.data) for event in again.sse.events if event.data != "[DONE]")


def _json(text: str) -> bool:
    try:
        __import__("json").loads(text)
    except ValueError:
        return False
    return True


def test_the_search_names_the_form_it_played_by_what_took_effect():
    example = streams.Example("chat", "plain words", "Quito", False, 0, False, Form(3, frozenset({"reasoning-content"})))
    assert "lmconform-stream=3:reasoning-content" in example.prompt()
    assert streams.as_case(streams.representatives(_source("chat"))[0], example, 4).provenance["example"] == 4


def _source(api):
    from lmconform.run.transparency import source_case

    return source_case(api)


# --- the command line and the pytest option ------------------------------------------------------------------------


def gate(upstream, proxy: str, *options: str) -> list[str]:
    return ["gate", "--proxy", proxy, "--upstream", upstream.base_url, "--model", "m", *options]


def test_the_gate_prints_the_shrunk_findings_and_compares_them_with_the_expected_rows(upstream, tmp_path, capsys):
    fuzz = ("--stream-fuzz", str(SHOWN_EXAMPLES))
    with running_proxy(upstream.base_url, "merges-at-comments") as proxy:
        # Without --expect every difference is the proxy's doing: the gate fails, and writes what it found.
        assert main(gate(upstream, proxy, *fuzz, "--write-expect", str(tmp_path / "got.toml"))) == 1
        out = capsys.readouterr().out
        assert "| chat | `comments`: comment lines in and between events |" in out
        assert "Replay: curl -sS -N -X POST" in out and "lmconform-stream=" in out
        written = load_expected(tmp_path / "got.toml")
        assert written.examples == SHOWN_EXAMPLES and any(row.features == ("comments",) for row in written.rows)
        assert main(gate(upstream, proxy, *fuzz, "--expect", str(tmp_path / "got.toml"))) == 0
        wrong = tmp_path / "wrong.toml"
        wrong.write_text(f'[stream_fuzz]\nseed = 0\nexamples = {SHOWN_EXAMPLES}\npreserved = []\n'
                         '[[stream_fuzz.changed]]\napi = "chat"\nfeatures = ["crlf"]\nfindings = ["sse.framing.data_is_json"]\n')
        capsys.readouterr()
        assert main(gate(upstream, proxy, *fuzz, "--expect", str(wrong))) == 1
        err = capsys.readouterr().err
        assert "chat with `crlf`: expected, not found" in err and "chat with `comments`: not in the expected rows" in err


@pytest.mark.parametrize("proxy, cause", [("per-read-utf8", "responses with `split-utf8`"), ("drops-cr", "with `cr`")])
def test_the_gate_without_expected_rows_fails_on_any_legal_stream_the_proxy_changed(upstream, capsys, proxy, cause):
    with running_proxy(upstream.base_url, proxy) as url:
        assert main(gate(upstream, url, "--stream-fuzz", str(GATE_EXAMPLES))) == 1
    err = capsys.readouterr().err
    assert "differences made by the proxy (no --expect: every one is its doing)" in err and cause in err


@pytest.mark.parametrize("options, message", [
    (["--stream-fuzz", "0"], "--stream-fuzz takes a positive number"),
    (["--stream-fuzz", "4", "--fault", "no-done"], "--fault and --stream-fuzz are two gates"),
    (["--stream-fuzz", "4", "--cases", "chat/*"], "--cases and --stream-fuzz are two gates"),
    (["--stream-fuzz", "4", "--expect", "{other}"], "holds the rows of 200 answers drawn with seed 0: run with"),
    (["--stream-fuzz", "4", "--expect", "{faults}"], "no [stream_fuzz] section"),
    (["--stream-fuzz", "4", "--expect", "{typo}"], "no stream feature is called crlff"),
])
def test_the_gate_refuses_bad_stream_fuzz_options(upstream, tmp_path, capsys, options, message):
    files = {"other": "[stream_fuzz]\nseed = 0\nexamples = 200\n", "faults": '[[fault]]\nname = "no-done"\n',
             "typo": '[stream_fuzz]\nexamples = 4\npreserved = ["crlff"]\n'}
    for name, text in files.items():
        (tmp_path / f"{name}.toml").write_text(text)
    options = [option.format(**{name: tmp_path / f"{name}.toml" for name in files}) for option in options]
    assert main(gate(upstream, upstream.base_url, *options)) == 2
    assert message in capsys.readouterr().err


def test_the_gate_refuses_an_upstream_that_serves_no_generated_forms(upstream, capsys):
    with running_proxy(upstream.base_url, "correct") as proxy:
        # The proxy forwards the answers but not the reference server's headers: nothing says which form came.
        assert main(["gate", "--proxy", proxy, "--upstream", proxy, "--model", "m", "--stream-fuzz", "2"]) == 2
    assert "answers no generated wire form" in capsys.readouterr().err


def test_the_suites_send_generated_answers_through_the_proxy_with_upstream_fuzz(upstream, tmp_path):
    with running_proxy(upstream.base_url, "merges-at-comments") as proxy:
        command = [sys.executable, "-m", "pytest", "--pyargs", "lmconform.suites", "-p", "no:cacheprovider", "-q",
                   "-k", "fuzz-streams and chat", "--endpoint", proxy, "--upstream", upstream.base_url,
                   "--upstream-fuzz", "6", "--checks", "sse.framing.data_is_json", "--checks", "client.void.*"]
        done = processes.run(command, timeout=600)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "[sse.framing.data_is_json]" in done.stdout and "comment lines in and between events" in done.stdout
    assert "Replay:" in done.stdout and "lmconform-stream=" in done.stdout
    without = processes.run([sys.executable, "-m", "pytest", "--pyargs", "lmconform.suites", "-p", "no:cacheprovider",
                             "-q", "--upstream-fuzz", "3"], timeout=600)
    assert without.returncode == 2 and "--upstream-fuzz sends answers through the target" in without.stderr + without.stdout


def test_a_found_row_belongs_to_the_expected_row_whose_features_its_form_holds():
    expected = StreamFuzz(0, 8, (StreamRow("chat", ("ids", "split-crlf"), ("a", "b")), StreamRow("responses", (), ("c",))),
                          frozenset({"crlf"}))
    larger = StreamRow("chat", ("ids", "split-crlf", "key-order"), ("a",))
    assert stream_differences(StreamFuzz(0, 8, (larger, StreamRow("responses", ("cr",), ("c",))),
                                         frozenset({"crlf"})), expected) == []
    found = StreamFuzz(0, 8, (replace(larger, findings=("a", "z")), StreamRow("chat", ("ids",), ("a",))),
                       frozenset({"crlf", "comments"}))
    assert stream_differences(found, expected) == [
        "chat with `ids`: not in the expected rows (a)",
        "chat with `ids` + `split-crlf` + `key-order`: also z",
        "responses with none: expected, not found",
        "preserved also `comments`"]
