"""When the answers arrived, in the run's page: a summary of the target (the median times to the first byte and to
the first token, the median tokens per second, the longest stall), then per streamed case its figures and a small
chart of its events over time, so that a stall (a flat stretch) or a burst (a cliff) is seen rather than read. Built
from the record's `timing` alone; a record without it has no section."""

from __future__ import annotations

import html
from statistics import median

from lmconform.verdicts.records import CaseTiming

WIDTH, HEIGHT = 220, 34

STYLE = """
.lmc-timing table { border-collapse: collapse; margin: .3em 0; }
.lmc-timing th, .lmc-timing td { padding: .1em .6em; text-align: right; border-bottom: 1px solid #eee; }
.lmc-timing th:first-child, .lmc-timing td:first-child { text-align: left; }
.lmc-timing svg { display: block; }
"""


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def middle(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return median(known) if known else None


def summary(timings: dict[str, CaseTiming]) -> dict[str, float | None]:
    """The target's figures over its cases: medians, and the longest stall of any stream."""
    streamed = [timing for timing in timings.values() if timing.curve]
    return {
        "first_byte_s": middle([timing.first_byte_s for timing in timings.values()]),
        "first_token_s": middle([timing.first_token_s for timing in streamed]),
        "tokens_per_s": middle([timing.tokens_per_s for timing in streamed]),
        "longest_gap_s": max((timing.longest_gap_s or 0.0 for timing in streamed), default=None),
    }


def chart(timing: CaseTiming) -> str:
    """Events so far against time: a step line, the longest gap marked in red."""
    end = max(timing.curve[-1][0], 1e-6)
    count = max(timing.curve[-1][1], 1)

    def x(at: float) -> float:
        return round(1 + at / end * (WIDTH - 2), 1)

    def y(events: int) -> float:
        return round(HEIGHT - 1 - events / count * (HEIGHT - 2), 1)

    points, previous = [], None
    for at, events in timing.curve:
        if previous is not None:
            points.append(f"{x(at)},{y(previous)}")
        points.append(f"{x(at)},{y(events)}")
        previous = events
    gap = ""
    pairs = list(zip(timing.curve, timing.curve[1:]))
    if pairs and timing.longest_gap_s:
        (start, before), (stop, _) = max(pairs, key=lambda pair: pair[1][0] - pair[0][0])
        gap = (f'<line x1="{x(start)}" y1="{y(before)}" x2="{x(stop)}" y2="{y(before)}" stroke="#c0392b" '
               'stroke-width="3"/>')
    label = f"{timing.events or count} events over {seconds(timing.curve[-1][0])}"
    return (f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>'
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fafafa"/>{gap}'
            f'<polyline points="{" ".join(points)}" fill="none" stroke="#1a56a8" stroke-width="1.2"/></svg>')


def timing_html(timings: dict[str, CaseTiming]) -> str:
    if not timings:
        return ""
    e = html.escape
    figures = summary(timings)
    parts = ['<section class="lmc-timing" id="timing">', "<h2>When the answers arrived</h2>",
             f"<p>Over {len(timings)} case{'' if len(timings) == 1 else 's'}: first byte after {seconds(figures['first_byte_s'])} and first token "
             f"after {seconds(figures['first_token_s'])} (medians), {rate(figures['tokens_per_s'])} tokens per "
             f"second where the usage says, the longest pause in a stream {seconds(figures['longest_gap_s'])}.</p>"]
    streamed = {case: timing for case, timing in sorted(timings.items()) if timing.curve}
    if streamed:
        parts.append("<p>Each streamed case: its events over time (a flat stretch is a stall, a cliff a burst; the "
                     "longest pause in red).</p><table><tr><th>Case</th><th>First byte</th><th>First token</th>"
                     "<th>Tokens/s</th><th>Events</th><th>Longest pause</th><th>Events over time</th></tr>")
        parts += [f"<tr><td><code>{e(case)}</code></td><td>{seconds(timing.first_byte_s)}</td>"
                  f"<td>{seconds(timing.first_token_s)}</td><td>{rate(timing.tokens_per_s)}</td>"
                  f"<td>{timing.events if timing.events is not None else '–'}</td>"
                  f"<td>{seconds(timing.longest_gap_s)}</td><td>{chart(timing)}</td></tr>"
                  for case, timing in streamed.items()]
        parts.append("</table>")
    parts.append("</section>")
    return "\n".join(parts)
