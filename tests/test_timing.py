"""When the answers arrived: the figures a run keeps per case (first byte, first token, tokens per second, the
events over time with the longest pause among them), the record that carries them (and older records without them),
the charts in the run's page (one time scale, a stall red, a missing rate explained) and the figures in the matrix."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from lmconform.cases import load_cases
from lmconform.checks.observed import Observed
from lmconform.report.matrix import build_matrix
from lmconform.report.matrix_html import render_html
from lmconform.report.run_page import run_page
from lmconform.report.timing import STALL_COLOUR
from lmconform.run import results_record
from lmconform.run.timing import POINTS, case_timing
from lmconform.target import Target
from lmconform.verdicts.records import results_of
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest

CASE = next(case for case in load_cases("chat") if case.id == "chat/max-tokens-cut-stream")


def chunk(payload: dict) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def streamed(times: list[float], usage: int = 40) -> Observed:
    """A chat stream: a role chunk, a word per later read at `times`, the finish and its usage, then [DONE]."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    reads = [chunk({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})]
    reads += [chunk({**base, "choices": [{"index": 0, "delta": {"content": f"w{n} "}, "finish_reason": None}]})
              for n in range(len(times) - 3)]
    reads += [chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 5, "completion_tokens": usage, "total_tokens": usage + 5}}),
              b"data: [DONE]\n\n"]
    exchange = HttpExchange(request=HttpRequest("POST", "http://x/v1/chat/completions", {}, {}), status=200,
                            headers={"content-type": "text/event-stream"},
                            chunks=[BodyChunk(at, data) for at, data in zip(times, reads)], duration_s=times[-1])
    return Observed(CASE, Target("http://x"), exchange)


def test_a_stall_is_the_longest_pause_and_stays_in_the_curve_however_long_the_stream():
    times = [0.2, 0.5] + [0.5 + n * 0.01 for n in range(1, 200)] + [4.5 + n * 0.01 for n in range(100)] + [5.6, 5.6]
    timing = case_timing(streamed(times))
    assert timing["first_byte_s"] == 0.2 and timing["first_token_s"] == 0.5 and timing["events"] == len(times)
    assert timing["longest_gap_s"] == round(4.5 - 2.49, 4)
    assert len(timing["curve"]) <= POINTS + 2 and [2.49, 201] in timing["curve"] and [4.5, 202] in timing["curve"]
    assert timing["tokens_per_s"] == round(40 / (5.6 - 0.5), 1)


def test_the_record_carries_the_timing_of_judged_cases_and_the_page_and_matrix_show_it():
    timing = case_timing(streamed([0.1, 0.3, 0.4, 2.0, 2.1, 2.1]))
    row = {"case": CASE.id, "check": "chat.stream.x", "kind": "wire", "level": "MUST", "outcome": "OK"}
    record = results_record({"url": "http://x", "label": "x"}, datetime.now(UTC), 1.0, [row], {},
                            0, {CASE.id: timing, "chat/not-judged": timing})
    assert list(record["timing"]) == [CASE.id]
    results = results_of(json.loads(json.dumps(record)))
    page = run_page(results)
    assert 'id="timing"' in page and "<svg" in page and "first token after 300 ms" in page
    assert f'stroke="{STALL_COLOUR}"' in page  # the longest pause, a stall, marked
    matrix = render_html(build_matrix([results]))
    assert "first token (median)" in matrix and "300 ms" in matrix


def test_a_record_written_before_timing_reads_as_before(tmp_path: Path):
    record = {"lmconform": "0.0.9", "target": {"url": "http://x", "label": "x"}, "results": []}
    results = results_of(record)
    assert results.timing == {} and 'id="timing"' not in run_page(results)
    odd = results_of({**record, "timing": {"chat/a": {"first_byte_s": "soon", "curve": [[1, "x"], [0.5, 3]]}}})
    assert odd.timing["chat/a"].first_byte_s is None and odd.timing["chat/a"].curve == ((0.5, 3),)


def row_of(page: str, case: str) -> str:
    start = page.index(f"<tr><td><code>{case}</code>")
    return page[start:page.index("</tr>", start)]


def test_every_chart_has_one_time_scale_only_a_stall_is_red_and_a_missing_rate_says_why():
    timings = {"chat/quick": case_timing(streamed([0.002, 0.003, 0.003, 0.004, 0.005, 0.005])),  # all at once
               "chat/stalled": case_timing(streamed([0.1, 0.3, 0.4, 2.0, 2.1, 2.1])),  # 1.6 s between two words
               "chat/paused": case_timing(streamed([0.1, 0.3, 0.4, 0.9, 1.0, 1.0], usage=0))}  # 0.5 s: no stall
    rows = [{"case": case, "check": "chat.stream.x", "kind": "wire", "level": "MUST", "outcome": "OK"}
            for case in timings]
    page = run_page(results_of({"target": {"url": "http://x", "label": "x"}, "results": rows, "timing": timings}))
    section = page[page.index('id="timing"'):]
    # The scale at the head of the column spans the longest stream, the stall threshold drawn on it; the quick
    # stream is a stroke at its very start, where on a scale of its own it would fill the chart.
    assert "time from the request, 0 to 2.10 s; a pause of 1 s or more is a stall" in section
    assert section.count(f'stroke="{STALL_COLOUR}"') == 2  # the threshold, and the one stall
    assert f'stroke="{STALL_COLOUR}"' in row_of(section, "chat/stalled") and 'class="lmc-stall"' in \
        row_of(section, "chat/stalled")
    assert f'stroke="{STALL_COLOUR}"' not in row_of(section, "chat/paused") + row_of(section, "chat/quick")
    quick = row_of(section, "chat/quick")
    xs = [float(point.split(",")[0]) for point in quick[quick.index('points="') + 8:].split('"')[0].split()]
    assert max(xs) < 2
    assert "1 stream stalled (paused 1 s or more)" in section
    # Tokens per second where the record gives it, else a dash and why.
    assert ">22.2</td>" in row_of(section, "chat/stalled")
    assert '— <span class="lmc-no-rate">too quick</span>' in row_of(section, "chat/quick")
    assert '— <span class="lmc-no-rate">no count</span>' in row_of(section, "chat/paused")
    assert "22.2 tokens per second (the median of the 1 stream whose rate could be computed)" in section
    assert "<i>no count</i>, the answer's usage did not count the tokens it generated" in section
    assert "<i>too quick</i>, the stream ran under 10 ms from its first token to its last event" in section
