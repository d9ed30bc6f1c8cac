"""When the answers arrived, in the run's page: a summary of the target (the median times to the first byte and to
the first token, the median tokens per second, the longest pause and how many streams stalled), then per streamed
case its figures and a small chart of its events over time, so that a stall (a flat stretch) or a burst (a cliff)
is seen rather than read. Every chart has one time scale, drawn with the stall threshold above them: a pause is red
only where it is a stall, so a 2 ms pause of a quick server is no red mark. Built from the record's `timing` alone;
a record without it has no section."""

from __future__ import annotations

import html
from statistics import median

from lmconform.verdicts.records import CaseTiming
from lmconform.vocabulary import RATE_MEASURABLE_S

WIDTH, HEIGHT, AXIS_HEIGHT = 220, 34, 30
# A pause of this long or longer between two events of a stream is a stall: someone watching the answer sees it stop.
STALL_S = 1.0
STALL_WORDS = f"{STALL_S:g} s"
STALL_COLOUR = "#c0392b"
STALLED = ' class="lmc-stall"'
# Why a stream has no rate: the record gives one only where it can be computed.
NO_RATE = {
    "no count": "the answer's usage did not count the tokens it generated",
    "no token": "no text or tool call arrived",
    "too quick": f"the stream ran under {RATE_MEASURABLE_S * 1000:.0f} ms from its first token to its last event, "
                 "too short to measure",
}

STYLE = f"""
.lmc-timing table {{ border-collapse: collapse; margin: .3em 0; }}
.lmc-timing th, .lmc-timing td {{ padding: .1em .6em; text-align: right; border-bottom: 1px solid #eee; }}
.lmc-timing th:first-child, .lmc-timing td:first-child {{ text-align: left; }}
.lmc-timing svg {{ display: block; }}
.lmc-timing .lmc-no-rate {{ color: #666; font-size: 11px; }}
.lmc-timing .lmc-stall {{ color: {STALL_COLOUR}; font-weight: bold; }}
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


def no_rate(timing: CaseTiming) -> str:
    """Why a stream the record gives no rate for has none (a key of NO_RATE)."""
    if timing.first_token_s is None:
        return "no token"
    if timing.curve[-1][0] - timing.first_token_s < RATE_MEASURABLE_S:
        return "too quick"
    return "no count"


def rate_cell(timing: CaseTiming) -> str:
    if timing.tokens_per_s is not None:
        return rate(timing.tokens_per_s)
    return f'— <span class="lmc-no-rate">{no_rate(timing)}</span>'


def stalls(timing: CaseTiming) -> list[tuple[tuple[float, int], tuple[float, int]]]:
    """The stalls the curve shows: two points of consecutive events at least STALL_S apart (the curve keeps the
    longest pause's two ends, so the longest is always among them when it is a stall)."""
    return [(earlier, later) for earlier, later in zip(timing.curve, timing.curve[1:])
            if later[1] - earlier[1] == 1 and later[0] - earlier[0] >= STALL_S]


def inside(steps: list[tuple[float, float]], index: int) -> bool:
    """Whether a point of a step line lies on the straight stretch between its neighbours, so drawing without it
    draws the same line (a server that writes its whole answer at once draws one vertical stroke)."""
    if index in (0, len(steps) - 1):
        return False
    (x0, y0), (x1, y1), (x2, y2) = steps[index - 1:index + 2]
    return x0 == x1 == x2 or y0 == y1 == y2


def chart(timing: CaseTiming, span: float) -> str:
    """Events so far against time, `span` seconds across (the same for every chart): a step line, each stall red."""
    count = max(timing.curve[-1][1], 1)

    def x(at: float) -> float:
        return round(1 + at / span * (WIDTH - 2), 1)

    def y(events: int) -> float:
        return round(HEIGHT - 1 - events / count * (HEIGHT - 2), 1)

    steps, previous = [], None
    for at, events in timing.curve:
        if previous is not None:
            steps.append((x(at), y(previous)))
        steps.append((x(at), y(events)))
        previous = events
    points = [f"{px},{py}" for index, (px, py) in enumerate(steps) if not inside(steps, index)]
    marks = "".join(f'<line x1="{x(start)}" y1="{y(before)}" x2="{x(stop)}" y2="{y(before)}" '
                    f'stroke="{STALL_COLOUR}" stroke-width="3"/>' for (start, before), (stop, _) in stalls(timing))
    label = f"{timing.events or count} events over {seconds(timing.curve[-1][0])}"
    return (f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>'
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fafafa"/>{marks}'
            f'<polyline points="{" ".join(points)}" fill="none" stroke="#1a56a8" stroke-width="1.2"/></svg>')


def axis(span: float) -> str:
    """The scale of every chart, `span` seconds across, with the stall threshold drawn from its start."""
    end = round(1 + STALL_S / span * (WIDTH - 2), 1)
    label = f"time from the request, 0 to {seconds(span)}; a pause of {STALL_WORDS} or more is a stall"
    stall = (f'x="{round(end / 2, 1)}" y="27" text-anchor="middle"' if end > WIDTH / 3
             else f'x="{round(end + 3, 1)}" y="15" text-anchor="start"')
    return (f'<svg width="{WIDTH}" height="{AXIS_HEIGHT}" viewBox="0 0 {WIDTH} {AXIS_HEIGHT}" role="img" '
            f'aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>'
            f'<path d="M1 2V10M1 6H{WIDTH - 1}M{WIDTH - 1} 2V10" stroke="#888" fill="none"/>'
            f'<line x1="1" y1="12" x2="{end}" y2="12" stroke="{STALL_COLOUR}" stroke-width="3"/>'
            f'<text x="1" y="27" font-size="10" font-weight="normal" fill="#444">0</text>'
            f'<text x="{WIDTH - 1}" y="27" font-size="10" font-weight="normal" fill="#444" text-anchor="end">'
            f'{seconds(span)}</text>'
            f'<text {stall} font-size="10" font-weight="normal" fill="{STALL_COLOUR}">stall: {STALL_WORDS}</text>'
            "</svg>")


def timing_html(timings: dict[str, CaseTiming]) -> str:
    if not timings:
        return ""
    e = html.escape
    figures = summary(timings)
    streamed = {case: timing for case, timing in sorted(timings.items()) if timing.curve}
    rated = sum(timing.tokens_per_s is not None for timing in streamed.values())
    stalled = sum(bool(stalls(timing)) for timing in streamed.values())
    speed = (f"{rate(figures['tokens_per_s'])} tokens per second (the median of the {rated} stream"
             f"{'' if rated == 1 else 's'} whose rate could be computed)" if rated
             else "no rate in tokens per second (none could be computed: the table says why)" if streamed
             else "no rate in tokens per second (no case was streamed)")
    parts = ['<section class="lmc-timing" id="timing">', "<h2>When the answers arrived</h2>",
             f"<p>Over {len(timings)} case{'' if len(timings) == 1 else 's'}: first byte after "
             f"{seconds(figures['first_byte_s'])} and first token after {seconds(figures['first_token_s'])} "
             f"(medians), {speed}; the longest pause in a stream {seconds(figures['longest_gap_s'])}, "
             f"{stalled or 'no'} stream{'' if stalled == 1 else 's'} stalled (paused {STALL_WORDS} or more).</p>"]
    if streamed:
        span = max(STALL_S, *(timing.curve[-1][0] for timing in streamed.values()))
        reasons = sorted({no_rate(timing) for timing in streamed.values() if timing.tokens_per_s is None})
        parts.append("<p>Each streamed case: its events over time, every chart on the one scale drawn at the top of "
                     "the column (a flat stretch is a pause, a cliff a burst; a stall, a pause of "
                     f"{STALL_WORDS} or more, in red).</p><table><tr><th>Case</th><th>First byte</th>"
                     "<th>First token</th><th>Tokens/s</th><th>Events</th><th>Longest pause</th>"
                     f"<th>{axis(span)}</th></tr>")
        parts += [f"<tr><td><code>{e(case)}</code></td><td>{seconds(timing.first_byte_s)}</td>"
                  f"<td>{seconds(timing.first_token_s)}</td><td>{rate_cell(timing)}</td>"
                  f"<td>{timing.events if timing.events is not None else '–'}</td>"
                  f"<td{STALLED if stalls(timing) else ''}>{seconds(timing.longest_gap_s)}</td>"
                  f"<td>{chart(timing, span)}</td></tr>" for case, timing in streamed.items()]
        parts.append("</table>")
        if reasons:
            parts.append("<p>Tokens per second is the tokens the answer's usage says were generated over the time "
                         "from the first token to the last event; “—” where it cannot be computed: "
                         + "; ".join(f"<i>{why}</i>, {NO_RATE[why]}" for why in reasons) + ".</p>")
    parts.append("</section>")
    return "\n".join(parts)
