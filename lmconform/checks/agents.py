"""Agent verdicts: a real coding agent (lmconform.agents) run on a task against the target, judged by what it showed
its user (its own machine-readable output) and by the exchanges lmconform relayed for it. Each request the agent
sent is an example of the case; the checks of one request judge each, the checks of the whole run judge the run's
last example. A verdict names the agent and its version; against a real model, a verdict the model decides as much
as the server says so (run it with --repeat K: pass^k)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lmconform.agents.outcome import OUTPUT_LIMIT, REQUEST_LIMIT, TIME_LIMIT, AgentRun, ToolRun
from lmconform.checks.observed import Observed
from lmconform.checks.refs import (
    CLAUDE_CODE_API_ERROR_SHOWN,
    LMSTUDIO_CLAUDE_CODE,
    LMSTUDIO_CLAUDE_CODE_SYSTEM_TURN,
    OPENCODE_EMPTY_TOOL_CALLS,
)
from lmconform.checks.registry import check
from lmconform.checks.scope import agent_case
from lmconform.vocabulary import Failure, Level, NotApplicable, Note, NoVerdict

SHOWN_CHARS = 300
SCRIPTED = "reference"  # the fingerprint of lmconform's reference server, whose scripted model does the task


def _run(observed: Observed) -> AgentRun:
    if observed.agent_run is None:
        raise NotApplicable("no agent ran for this case")
    return observed.agent_run


def _whole_run(observed: Observed) -> AgentRun:
    """The run, for a check of the whole run: judged once, on its last example, and only if it came to an end."""
    run = _run(observed)
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


def _said(run: AgentRun) -> str:
    """The agent's own words about what went wrong, as evidence: the errors it showed, else its stderr's end."""
    if run.outcome.errors:
        return run.shown(f"{run.title} showed: " + " | ".join(error[:SHOWN_CHARS] for error in run.outcome.errors))
    if run.stderr.strip():
        return run.shown(f"{run.title}'s stderr ({run.exit_text}): {run.stderr_tail()}")
    return f"{run.title} showed no error ({run.exit_text or run.ended})"


def _decided_by_the_model(observed: Observed) -> Iterator[Note]:
    if (observed.target.fingerprint or {}).get("kind") != SCRIPTED:
        yield Note("the model decides this verdict as much as the server: a real model may or may not do the task "
                   "the same way each time (--repeat K judges K runs, pass^k)")


@check("agent.request.accepted", level=Level.MUST, kind="agent", applies=agent_case,
       ref=LMSTUDIO_CLAUDE_CODE_SYSTEM_TURN, title="the target accepts every request the agent sends",
       proven_by=("messages-system-turn-refused",))
def request_accepted(observed: Observed) -> Iterator[Failure]:
    run = _run(observed)
    if not _sent(observed):
        raise NotApplicable(f"{run.label} sent no request")
    exchange = observed.exchange
    if exchange.succeeded and not exchange.error:
        return
    if exchange.error:
        actual = exchange.error
    else:
        actual = f"HTTP {exchange.status}: {exchange.body_excerpt(SHOWN_CHARS)}"
    yield Failure(f"a 2xx answer to {run.label}'s request", actual, _said(run))


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
        arguments, error = call.parsed_arguments()
        meant = f"{call.name}({call.arguments_text[:SHOWN_CHARS]})"
        if error is not None:
            yield Failure(f"{run.label} runs {meant}", f"the arguments sent do not parse ({error}); it ran {ran}",
                          _said(run))
        elif not any(_same_call(tool, call.name, arguments) for tool in run.outcome.tool_runs):
            yield Failure(f"{run.label} runs {meant}", run.shown(f"it ran {ran}"), _said(run))
    yield from _decided_by_the_model(observed)


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


@check("agent.answer.reached_user", level=Level.MUST, kind="agent", applies=agent_case, ref=LMSTUDIO_CLAUDE_CODE,
       title="the agent shows its user an answer that quotes what the task's file says",
       proven_by=("messages-tool-results-dropped", "messages-partial-json-cumulative", "messages-error-event-mid-stream"))
def answer_reached_user(observed: Observed) -> Iterator[Failure | Note]:
    run = _whole_run(observed)
    shown = run.outcome.final_text
    if shown is None or run.secret.lower() not in shown.lower():
        actual = f"it showed {run.shown(shown[:SHOWN_CHARS])!r}" if shown else "it showed no answer"
        if run.outcome.errors:
            actual += f" but the error {run.shown(run.outcome.errors[0][:SHOWN_CHARS])!r}"
        yield Failure(f"{run.label} shows an answer quoting the secret word {run.secret!r}",
                      f"{actual} ({run.ended}, {run.exit_text}, after {run.requests} requests)", _said(run))
    yield from _decided_by_the_model(observed)


@check("agent.loop.bounded", level=Level.MUST, kind="agent", applies=agent_case, ref=OPENCODE_EMPTY_TOOL_CALLS,
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


@check("agent.error.none_shown", level=Level.MUST, kind="agent", applies=agent_case,
       ref=CLAUDE_CODE_API_ERROR_SHOWN, title="the agent shows its user no error, and exits with status 0",
       proven_by=("messages-error-event-mid-stream",))
def error_none_shown(observed: Observed) -> Iterator[Failure | Note]:
    run = _whole_run(observed)
    for error in run.outcome.errors:
        yield Failure(f"no error shown by {run.label}", run.shown(error[:SHOWN_CHARS]), run.shown(run.stderr_tail()))
    if not run.outcome.errors and run.ended != REQUEST_LIMIT and run.exit_status not in (0, None):
        yield Failure(f"{run.label} exits with status 0", run.exit_text, _said(run))
    yield from (Note(f"{run.title} retried: {retry}") for retry in run.outcome.retries)
    yield from (Note(f"{run.title} said: {notice}") for notice in run.outcome.notices)
