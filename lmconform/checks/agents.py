"""Agent verdicts: a real coding agent (lmconform.agents) run on a task against the target, judged by what it showed
its user (its own machine-readable output) and by the exchanges lmconform relayed for it. Each request the agent
sent is an example of the case; the checks of one request judge each, the checks of the whole run judge the run's
last example. A verdict names the agent and its version; against a real model, a verdict the model decides as much
as the server says so (run it with --repeat K: pass^k)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lmconform.agents.changes import changes_words, request_changes
from lmconform.agents.outcome import EXITED, OUTPUT_LIMIT, REQUEST_LIMIT, TIME_LIMIT, AgentRun, ToolRun
from lmconform.checks.errors import OVERFLOW_WORDS
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    CLAUDE_CODE_API_ERROR_SHOWN,
    LMSTUDIO_CLAUDE_CODE,
    LMSTUDIO_CLAUDE_CODE_SYSTEM_TURN,
    OPENCODE_EMPTY_TOOL_CALLS,
    OPENCODE_OVERFLOW_UNRECOGNISED,
)
from lmconform.checks.registry import check
from lmconform.checks.scope import agent_answerable, agent_case, agent_overflow
from lmconform.normalize.errors import error_words, refusal_words
from lmconform.normalize.events import ToolCall
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, NoVerdict
from lmconform.wire.http import HttpExchange

SHOWN_CHARS = 300
SCRIPTED = "reference"  # the fingerprint of lmconform's reference server, whose scripted model does the task


def _run(observed: Observed) -> AgentRun:
    if observed.agent_run is None:
        raise NotApplicable("no agent ran for this case")
    return observed.agent_run


def _answerable_run(observed: Observed) -> AgentRun:
    """The run, for a check of a task the agent can answer: on a file past the context there is no answer to judge,
    and a refusal of the overflow is the server's due (agent.overflow.ended_clearly judges how the agent ends)."""
    run = _run(observed)
    if not agent_answerable(observed.case):
        raise NotApplicable("the task's file is longer than the context: no answer to judge")
    return run


def _whole_run(observed: Observed) -> AgentRun:
    """The run, for a check of the whole run: judged once, on its last example, and only if it came to an end."""
    run = _answerable_run(observed)
    if not observed.agent_final:
        raise NotApplicable("the run is judged on its last request")
    if run.ended in (TIME_LIMIT, OUTPUT_LIMIT):
        how = (f"did not end within {run.limits.seconds:g} s" if run.ended == TIME_LIMIT
               else "wrote more output than a run keeps")
        raise NoVerdict(f"{run.label} {how} and was stopped ({run.exit_text}); its last output:\n"
                        f"{run.shown(run.last_output)}")
    return run


def _sent(observed: Observed) -> bool:
    """Whether the example is a request the agent sent (not the stand-in of a run that sent none)."""
    return any(exchange is observed.exchange for exchange in _run(observed).exchanges)


def shown_error(error: str) -> str:
    """An error an agent showed, as a reader wants it: a server's error body it passed on as it came (Codex shows
    the JSON) in words, its message whole; any other text as it is, cut."""
    return error_words(error) or error[:SHOWN_CHARS]


def _said(run: AgentRun) -> str:
    """The agent's own words about what went wrong, as evidence: the errors it showed, else its stderr's end."""
    if run.outcome.errors:
        return run.shown(f"{run.title} showed: " + " | ".join(map(shown_error, run.outcome.errors)))
    if run.stderr.strip():
        return run.shown(f"{run.title}'s stderr ({run.exit_text}): {run.stderr_tail()}")
    return f"{run.title} showed no error ({run.exit_text or run.ended})"


def _decided_by_the_model(observed: Observed) -> Iterator[Note]:
    if (observed.target.fingerprint or {}).get("kind") != SCRIPTED:
        yield Note("the model decides this verdict as much as the server: a real model may or may not do the task "
                   "the same way each time (--repeat K judges K runs, pass^k)")


@check("agent.request.accepted", level=Level.SHOULD, kind="agent", applies=agent_answerable,
       ref=LMSTUDIO_CLAUDE_CODE_SYSTEM_TURN, proven_by=("messages-system-turn-refused",),
       title="the target accepts each request as the agent sends it (a refusal the agent works round is a limit)")
def request_accepted(observed: Observed) -> Iterator[Failure]:
    # SHOULD: a refusal is judged with what the agent did next. Claude Code asks again without what was refused and
    # finishes: its user is served, with a limit. Where the agent did not finish, the agent's own checks (MUST) fail
    # and this refusal is why.
    run = _answerable_run(observed)
    if not _sent(observed):
        raise NotApplicable(f"{run.label} sent no request")
    exchange = observed.exchange
    if exchange.succeeded and not exchange.error:
        return
    refused = exchange.error or refusal_words(exchange)
    then = _what_next(run, exchange, refused)
    yield Failure(f"a 2xx answer to {run.label}'s request", f"{refused}; {then}",
                  f"the refusal: {exchange.body_excerpt(SHOWN_CHARS) if not exchange.error else exchange.error}\n"
                  f"then: {then}")


def _what_next(run: AgentRun, refused: HttpExchange, refusal: str) -> str:
    """What the agent did after a refusal: the request that replaced it (how it differs), and whether the agent then
    did its task (with its own words, where they say more than the refusal)."""
    position = next(index for index, exchange in enumerate(run.http_exchanges) if exchange is refused)
    same_route = refused.request.url.split("?", 1)[0]
    # The request that replaced it: of the later ones to the same route, the one that differs least (an agent may
    # have another conversation going, as opencode's title request).
    later = [request_changes(refused.request, exchange.request) for exchange in run.http_exchanges[position + 1:]
             if exchange.request.url.split("?", 1)[0] == same_route]
    did = f"{run.label} asked again {changes_words(min(later, key=len))}" if later \
        else f"{run.label} sent no other request"
    if finished(run):
        return f"{did}, and finished its task"
    said = _said(run)
    shown = refusal.partition(": ")[2] or refusal
    return f"{did}, and did not finish its task" + ("" if shown in said else f" ({said})")


def finished(run: AgentRun) -> bool:
    """Whether the agent did its job: it ended by itself, showed no error, and its answer quotes the task's file."""
    shown = run.outcome.final_text or ""
    return run.ended == EXITED and not run.outcome.errors and run.secret.lower() in shown.lower()


@check("agent.tool.ran_with_arguments_sent", level=Level.MUST, kind="agent", applies=agent_case,
       ref=LMSTUDIO_CLAUDE_CODE, title="the agent runs the tool call an answer makes, with the arguments it sent",
       proven_by=("messages-partial-json-cumulative", "messages-error-event-mid-stream"))
def tool_ran_with_arguments_sent(observed: Observed) -> Iterator[Failure | Note]:
    run = _run(observed)
    if not _sent(observed) or not observed.exchange.succeeded:
        raise NotApplicable("no answer to read a tool call from")
    try:
        calls = observed.generation.tool_calls()
    except NotApplicable:
        raise
    except Exception as error:  # a stream no reader can follow: what was sent cannot be said
        raise NotApplicable(f"the answer cannot be read: {type(error).__name__}: {error}") from None
    if not calls:
        raise NotApplicable("the answer calls no tool")
    ran = ", ".join(tool.shown() for tool in run.outcome.tool_runs) or "no tool"
    for call in calls:
        # Where a stream says a call's arguments more than once (its deltas, then whole in a `done` event or the
        # final object) and the two disagree, each is a reading of what was sent: the agent's own says what it did,
        # and the contradiction is the wire checks' finding.
        readings = argument_readings(observed.exchange, call)
        meant = f"{call.name}({call.arguments_text[:SHOWN_CHARS]})"
        matched = [reading for reading in readings
                   if any(_same_call(tool, call.name, reading) for tool in run.outcome.tool_runs)]
        if matched:
            if len(readings) > 1:
                yield Note(f"the answer says the arguments of {call.name} {len(readings)} ways "
                           f"({'; '.join(_canonical(reading)[:120] for reading in readings)}); {run.label} ran "
                           f"{_canonical(matched[0])[:120]}")
            continue
        if not readings:
            _, unparsed = call.parsed_arguments()
            yield Failure(f"{run.label} runs {meant}", f"the arguments sent do not parse ({unparsed}); it ran {ran}",
                          _said(run))
        else:
            yield Failure(f"{run.label} runs {meant}", run.shown(f"it ran {ran}"), _said(run))
    yield from _decided_by_the_model(observed)


def argument_readings(exchange: HttpExchange, call: ToolCall) -> list[Any]:
    """Every reading of a call's arguments the answer holds, each once: its fragments put together, then each
    whole copy the answer also sends (an `arguments` or `input` beside the call's name, in a `done` event or the
    final object)."""
    readings: list[Any] = []
    value, error = call.parsed_arguments()
    if error is None:
        readings.append(value)
    for payload in exchange.payloads if exchange.is_event_stream else [exchange.json]:
        for whole in _whole_arguments(payload, call.name):
            if whole not in readings:
                readings.append(whole)
    return readings


def _whole_arguments(value: Any, name: str) -> Iterator[Any]:
    if isinstance(value, dict):
        if value.get("name") == name:
            for key in ("arguments", "input"):
                found = value.get(key)
                if isinstance(found, str):
                    try:
                        found = json.loads(found)
                    except ValueError:
                        continue
                if isinstance(found, dict) and found:
                    yield found
        for item in value.values():
            yield from _whole_arguments(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from _whole_arguments(item, name)


def _same_call(tool: ToolRun, name: str, arguments: Any) -> bool:
    """Whether the agent's run is the call: the same tool (an agent that does not name it, as Codex for its shell,
    is judged on its arguments alone) and the same arguments, as far as the agent reports them."""
    if tool.name and tool.name.lower() != name.lower():
        return False
    if not isinstance(arguments, dict) or not isinstance(tool.arguments, dict):
        return tool.arguments == arguments
    if tool.name:
        return _canonical(tool.arguments) == _canonical(arguments)
    return all(arguments.get(key) == value for key, value in tool.arguments.items())


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@check("agent.answer.reached_user", level=Level.MUST, kind="agent", applies=agent_answerable, ref=LMSTUDIO_CLAUDE_CODE,
       title="the agent shows its user an answer that quotes what the task's file says",
       proven_by=("messages-tool-results-dropped", "messages-partial-json-cumulative", "messages-error-event-mid-stream"))
def answer_reached_user(observed: Observed) -> Iterator[Failure | Note]:
    run = _whole_run(observed)
    shown = run.outcome.final_text
    if shown is None or run.secret.lower() not in shown.lower():
        actual = f"it showed “{run.shown(shown[:SHOWN_CHARS])}”" if shown else "it showed no answer"
        if run.outcome.errors:
            actual += f" but the error “{run.shown(shown_error(run.outcome.errors[0]))}”"
        yield Failure(f"{run.label} shows an answer quoting the secret word {run.secret!r}",
                      f"{actual} ({run.ended}, {run.exit_text}, after {run.requests} requests)", _said(run))
    yield from _decided_by_the_model(observed)


@check("agent.loop.bounded", level=Level.MUST, kind="agent", applies=agent_answerable, ref=OPENCODE_EMPTY_TOOL_CALLS,
       title="the agent ends its task within the run's limit of requests (no loop, no storm of retries)",
       proven_by=("messages-tool-results-dropped",))
def loop_bounded(observed: Observed) -> Iterator[Failure | Note]:
    run = _whole_run(observed)
    if run.ended == REQUEST_LIMIT:
        retried = f"; it retried {len(run.outcome.retries)} of them" if run.outcome.retries else ""
        ran = ", ".join(tool.shown() for tool in run.outcome.tool_runs[-3:])
        yield Failure(f"{run.label} done within {run.limits.requests} requests",
                      f"it asked for request {run.requests} and was stopped{retried}",
                      run.shown(f"its last tool runs: {ran}" if ran else _said(run)))
    yield from _decided_by_the_model(observed)


@check("agent.error.none_shown", level=Level.MUST, kind="agent", applies=agent_answerable,
       ref=CLAUDE_CODE_API_ERROR_SHOWN, title="the agent shows its user no error, and exits with status 0",
       proven_by=("messages-error-event-mid-stream",))
def error_none_shown(observed: Observed) -> Iterator[Failure | Note]:
    run = _whole_run(observed)
    for error in run.outcome.errors:
        yield Failure(f"no error shown by {run.label}", run.shown(shown_error(error)), run.shown(run.stderr_tail()))
    if not run.outcome.errors and run.ended != REQUEST_LIMIT and run.exit_status not in (0, None):
        yield Failure(f"{run.label} exits with status 0", run.exit_text, _said(run))
    yield from (Note(f"{run.title} retried: {retry}") for retry in run.outcome.retries)
    yield from (Note(f"{run.title} said: {notice}") for notice in run.outcome.notices)


# An agent's own words for an overflow it recognised, beside those a server's refusal says: Codex's "ran out of room
# in the model's context window".
AGENT_OVERFLOW_WORDS = re.compile(rf"{OVERFLOW_WORDS.pattern}|context window", re.IGNORECASE)


@check("agent.overflow.ended_clearly", level=Level.MUST, kind="agent", applies=agent_overflow,
       ref=OPENCODE_OVERFLOW_UNRECOGNISED,
       title="on a tool output that overflows the context, the agent ends within its limits showing an error that "
             "names the overflow, or compacts its history and goes on",
       proven_by=("context-overflow-500", "context-overflow-detail", "context-overflow-as-text",
                  "context-overflow-stream-cut"))
def overflow_ended_clearly(observed: Observed) -> Iterator[Failure | Note]:
    # MUST: an agent that meets an overflow in the shape it knows tells its user so (or compacts and goes on); one
    # that does not loops to its limit, shows an error that says nothing of the context, shows the server's error
    # as the model's answer, or ends without a word. A run stopped at its time limit is judged too: retrying an
    # overflow until stopped is one of the ways it fails.
    run = _run(observed)
    if not agent_overflow(observed.case):
        raise NotApplicable("the task's file fits the context")
    if not observed.agent_final:
        raise NotApplicable("the run is judged on its last request")
    expected = f"{run.label} stops showing an error that names the overflow, or compacts its history and goes on"
    shown = (run.outcome.final_text or "").strip()
    if run.ended == REQUEST_LIMIT:
        actual = f"it asked for request {run.requests} and was stopped"
    elif run.ended in (TIME_LIMIT, OUTPUT_LIMIT):
        actual = (f"it was still going after {run.limits.seconds:g} s" if run.ended == TIME_LIMIT
                  else "it wrote more output than a run keeps") + f" and was stopped ({run.exit_text})"
    elif run.outcome.errors:
        if any(AGENT_OVERFLOW_WORDS.search(error) for error in run.outcome.errors):
            return
        actual = f"it showed “{run.shown(shown_error(run.outcome.errors[-1]))}”, which does not name the overflow"
    elif OVERFLOW_WORDS.search(shown):
        actual = f"it showed the server's overflow error as the model's answer: “{run.shown(shown[:SHOWN_CHARS])}”"
    elif not shown:
        actual = f"it ended showing neither an answer nor an error ({run.exit_text or run.ended})"
    else:
        return  # it went on past the overflow and answered
    retried = f"; it retried {len(run.outcome.retries)} times" if run.outcome.retries else ""
    yield Failure(expected, f"{actual} (after {run.requests} requests{retried})", _said(run))
