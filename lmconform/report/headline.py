"""The headline (lmconform.verdicts.headline: will each client work, and each surface) as a terminal shows it and as
GitHub Markdown shows it, with the legend and colours of its grades that every page shares."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable

from lmconform.report.markdown import md
from lmconform.verdicts.grades import Line
from lmconform.verdicts.headline import Headline
from lmconform.vocabulary import OUTCOME_STYLES, STATUS_MEANING, STATUS_STYLE, Outcome

NOTE_LINES = 3  # lines of a wrapped note (the cause, the way round) in a terminal


# --- text and Markdown ---------------------------------------------------------------------------------------------

def headline_text(headline: Headline, width: int = 120) -> list[str]:
    """A short table for a terminal: name and verdict; the why of a line that is not simply working follows it,
    indented and wrapped to `width` (three lines at most)."""
    lines = []
    for title, group in (("client", headline.clients), ("surface", headline.surfaces)):
        if not group:
            continue
        name_width = max(len(title), *(len(line.name) for line in group))
        lines.append(f"{title:<{name_width}}  verdict")
        for line in group:
            lines.append(f"{line.name:<{name_width}}  {line.verdict}")
            if line.why:
                lines += textwrap.wrap(line.why, max(width, 40), initial_indent="    ", subsequent_indent="    ",
                                       max_lines=3, placeholder=" …")
            for label, text in line.notes:
                lines += textwrap.wrap(text, max(width, 40), initial_indent=f"    {label}: ",
                                       subsequent_indent="      ", max_lines=NOTE_LINES, placeholder=" …")
    return lines


def headline_markdown(headline: Headline, link: Callable[[Line], str | None] = lambda line: None) -> list[str]:
    """Two GitHub Markdown tables (clients, then surfaces): name, verdict, why; `link` may point each why
    somewhere."""
    lines: list[str] = []
    for title, group in (("Client", headline.clients), ("Surface", headline.surfaces)):
        if not group:
            continue
        lines += ["", f"| {title} | Verdict | Why |", "| --- | --- | --- |"]
        for line in group:
            why = md(line.why)
            target = link(line)
            if why and target:
                why = f"[{why}]({target})"
            why = "<br>".join(filter(None, [why, *(f"{label}: {md(text)}" for label, text in line.notes)]))
            lines.append(f"| {md(line.name)} | {line.verdict} | {why} |")
    return lines[1:]


def counts_line(counts: Counter) -> str:
    """`719 OK · 2 FAILED`, in the order of severity, worst first, only outcomes that occur."""
    shown = [f"{counts[outcome]} {outcome}" for outcome in reversed(Outcome) if counts[outcome]]
    return " · ".join(shown) or "no verdicts"


def legend() -> list[tuple[str, str, str]]:
    """(symbol, status, meaning) for every status."""
    return [(STATUS_STYLE[status][1], status, meaning) for status, meaning in STATUS_MEANING.items()]


def status_colours(status: str) -> tuple[str, str]:
    """(background, text colour) of a status, from the outcome it borrows them from."""
    style = OUTCOME_STYLES[STATUS_STYLE[status][0]]
    return style.background, style.colour
