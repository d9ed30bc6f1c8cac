"""The answer first: will a client work with this target? One line per client lmconform replays answers through,
and one per surface of the API, each saying works, partly, breaks or not offered, with the reason of its worst
finding.

It is built from results-record rows alone (records.py), so the run report, the pytest terminal, a CI step summary
and the matrix say the same thing, and a client or surface added to the registry appears here without an edit:
clients are the `client` checks' surfaces, each per API it replays; surfaces are the other checks' surfaces, with
two areas that cut across them (tool calls, chaining) gathered under one name each.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lmconform.api_table import APIS
from lmconform.report.markdown import md
from lmconform.surfaces import client_line, surface_name, surface_rank
from lmconform.verdicts.records import CaseResult
from lmconform.vocabulary import OUTCOME_STYLES, Outcome

WORKS, PARTLY, BREAKS, NOT_OFFERED = "works", "partly", "breaks", "not offered"
# How a status is shown: the outcome whose colours it takes, and a symbol that reads without colour.
STATUS_STYLE = {WORKS: (Outcome.OK, "✓"), PARTLY: (Outcome.NON_STRICT, "◐"), BREAKS: (Outcome.FAILED, "✗"),
                NOT_OFFERED: (Outcome.UNSUPPORTED, "–")}
STATUS_MEANING = {
    WORKS: "no MUST broken on any case (a SHOULD or an INFO finding may be listed)",
    PARTLY: "a MUST broken, or no verdict, on some of its cases; the others pass",
    BREAKS: "a MUST broken, or no verdict, on every case it judged",
    NOT_OFFERED: "the target lacks the feature",
}
# A real client breaks on these (MUST = a real client breaks; ERROR = the target refused, stalled or crashed).
BREAKING = frozenset({Outcome.FAILED, Outcome.ERROR})
LEVEL_RANK = {"MUST": 0, "SHOULD": 1, "INFO": 2}
# Areas a reader asks about across surfaces. A check whose id starts with one of a topic's prefixes is counted
# under the topic; every other check under its surface.
TOPICS = (
    ("Tool calls", ("chat.stream.tool_call.", "chat.tool_choice.", "chat.finish_reason.tool_calls",
                    "generation.tool_call.", "responses.tools.", "responses.function_call.")),
    ("Chaining", ("responses.chain.",)),
)
REASON_CHARS = 220


@dataclass(frozen=True)
class Line:
    """One client or surface: its status over the cases that exercised it, and its worst finding."""

    key: str  # stable and fragment-safe: `client-void-chat`, `surface-tool-calls`
    name: str
    status: str
    cases: int  # cases with a verdict (model-dependent verdicts aside, in a stable headline)
    breaking: int  # of those, cases with a FAILED or ERROR verdict
    counts: Counter = field(default_factory=Counter)  # verdicts per outcome
    worst: CaseResult | None = None
    worst_cases: tuple[str, ...] = ()  # the cases on which the worst finding's check did not pass
    model_dependent: int = 0  # verdicts left out because the model, not the server, decides them
    stable: bool = False

    @property
    def outcome(self) -> Outcome:
        return STATUS_STYLE[self.status][0]

    @property
    def symbol(self) -> str:
        return STATUS_STYLE[self.status][1]

    @property
    def verdict(self) -> str:
        return f"{self.symbol} {self.status}"

    @property
    def why(self) -> str:
        """One line: the worst finding's title and what happened, and on how many cases; empty when all passed.
        A stable line (the published matrix) gives the known-verdicts file's reason and no counts, which a
        model's choices could move."""
        if self.worst is None:
            return ""
        worst = self.worst
        reason = worst.known.reason if self.stable and worst.known else worst.reason
        text = f"{worst.title or worst.check}: {reason}" if reason and reason != worst.title else worst.title
        if not self.stable:
            shown = "case" if len(self.worst_cases) == 1 else "cases"
            text = f"{text} ({len(self.worst_cases)} {shown}: {', '.join(self.worst_cases[:2])}" \
                   f"{', …' if len(self.worst_cases) > 2 else ''})"
        return text if len(text) <= REASON_CHARS else f"{text[:REASON_CHARS - 1]}…"


@dataclass(frozen=True)
class Headline:
    clients: tuple[Line, ...]
    surfaces: tuple[Line, ...]

    @property
    def lines(self) -> tuple[Line, ...]:
        return self.clients + self.surfaces


def topic_of(check: str, surface: str) -> str:
    for name, prefixes in TOPICS:
        if check.startswith(prefixes):
            return name
    return surface_name(surface)


def fragment(text: str) -> str:
    return "".join(character if character.isalnum() else "-" for character in text.lower()).strip("-")


def build_headline(rows: Iterable[CaseResult], stable: bool = False) -> Headline:
    """The headline of one run. `stable`: leave out verdicts a known-verdicts file marks model-dependent and the
    counts, for a page that must come out the same on every machine."""
    rows = list(rows)
    clients: dict[tuple[str, str], list[CaseResult]] = {}
    surfaces: dict[str, list[CaseResult]] = {}
    surface_order: dict[str, tuple] = {}
    agents: dict[tuple[str, str], list[CaseResult]] = {}
    for row in rows:
        if row.kind == "client":
            clients.setdefault((row.surface, row.api), []).append(row)
        elif row.kind == "agent":  # a coding agent is a client too, named with its version
            agents.setdefault((row.agent, row.api), []).append(row)
        else:
            topic = topic_of(row.check, row.surface)
            surfaces.setdefault(topic, []).append(row)
            rank = (surface_rank(row.surface), topic != surface_name(row.surface))
            surface_order[topic] = min(surface_order.get(topic, rank), rank)
    api_order = list(APIS)
    client_keys = sorted(clients, key=lambda key: (surface_rank(key[0]), api_order.index(key[1])
                                                   if key[1] in api_order else len(api_order), key[1]))
    return Headline(
        clients=tuple(line_of(f"client-{fragment(surface.removeprefix('client.'))}-{fragment(api)}",
                              client_line(surface, api), clients[surface, api], stable)
                      for surface, api in client_keys)
        + tuple(line_of(f"agent-{fragment(agent)}-{fragment(api)}", client_line(agent or "coding agent", api),
                        agents[agent, api], stable) for agent, api in sorted(agents)),
        surfaces=tuple(line_of(f"surface-{fragment(topic)}", topic, surfaces[topic], stable)
                       for topic in sorted(surfaces, key=lambda topic: (surface_order[topic], topic))),
    )


def line_of(key: str, name: str, rows: list[CaseResult], stable: bool) -> Line:
    judged = [row for row in rows if not (stable and row.known and row.known.model_dependent)]
    counts = Counter(row.outcome for row in judged)
    cases: dict[str, set[str]] = {}
    for row in judged:
        cases.setdefault(row.case, set()).add(row.outcome)
    offered = {case for case, outcomes in cases.items() if outcomes != {Outcome.UNSUPPORTED}}
    breaking = {case for case in offered if cases[case] & BREAKING}
    if cases and not offered:
        status = NOT_OFFERED
    elif not breaking:
        status = WORKS
    else:
        status = BREAKS if breaking == offered else PARTLY
    worst = worst_finding(judged)
    worst_cases = tuple(sorted({row.case for row in judged if worst and row.check == worst.check
                                and row.outcome != Outcome.OK}))
    return Line(key, name, status, len(offered), len(breaking), counts, worst, worst_cases,
                len(rows) - len(judged), stable)


def worst_finding(rows: list[CaseResult]) -> CaseResult | None:
    """The most severe verdict that is not OK: then MUST before SHOULD, the check failing on most cases, and the
    first check and case by id, so the same rows always name the same finding."""
    found = [row for row in rows if row.outcome != Outcome.OK]
    if not found:
        return None
    spread = Counter(row.check for row in found)
    return min(found, key=lambda row: (-Outcome(row.outcome).severity, LEVEL_RANK.get(row.level, 3),
                                       -spread[row.check], row.check, row.case))


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
