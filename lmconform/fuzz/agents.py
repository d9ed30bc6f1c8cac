"""A source of examples (lmconform.source): real coding agents. A case that names this source (`"source": "agents"`)
and an agent (`"agent": {"name", "task", "secret"}`) takes part in a run that runs that agent (--agents), and is
played by running the agent on the task, once (K times with --repeat K), through lmconform's relay
(lmconform.agents.runner). Each request the agent sent of the case's API is an example of
its own, judged by every check of the API as a generated request is; every example carries the agent's run, which
the agent checks judge (lmconform.checks.agents). The checks that apply are those that apply to the requests the
agent is on record as sending (its recorded cases, `recorded-<agent>-<version>-N.json`).
"""

from __future__ import annotations

import json
from dataclasses import replace

from lmconform.agents import AGENTS
from lmconform.agents.outcome import AgentRun, Limits
from lmconform.agents.runner import run_agent
from lmconform.agents.sandbox import FILLER_LINE
from lmconform.agents.versions import node_modules
from lmconform.api_table import api_of
from lmconform.cases import Case, load_cases
from lmconform.checks.evaluate import judged as evaluate_judged
from lmconform.checks.observed import AnyObserved, Observed
from lmconform.settings import RunSettings
from lmconform.source import SourceContext
from lmconform.target import Target
from lmconform.wire.http import HttpExchange, HttpRequest
from lmconform.wire.websocket import WebSocketExchange

SOURCE = "agents"
SHOWN_TEXT_CHARS = 300


def takes_part(case: Case, settings: RunSettings) -> bool:
    return case.agent is not None and case.agent.name in settings.agents


def representatives(case: Case) -> list[Case]:
    """The requests the agent is on record as sending given the case's shape of model id (its recorded cases), as
    examples of this case; the case's own request when none is recorded."""
    agent = AGENTS[case.agent_task.name]
    client = agent.client  # recorded cases name it by its user agent: `claude-cli 2.1.332`
    shape = agent.model_shape(case.agent_task.model_shape).name
    recorded = [other for other in load_cases(case.api)
                if str(other.provenance.get("client", "")).startswith(client + " ")
                and other.provenance.get("model_shape", shape) == shape]
    return [_example(case, other.method, other.path, other.body) for other in recorded] or [
        _example(case, case.method, case.path, case.body)]


def examples(case: Case, context: SourceContext) -> list[AnyObserved]:
    """The agent run `settings.repeat` times; every request of every run is an example (none of them a finding to
    shrink: an agent is not a generator); none when the run does not run the case's agent."""
    task, settings = case.agent_task, context.settings
    agent = AGENTS[task.name]
    if not takes_part(case, settings):
        return []
    limits = Limits(settings.agent_seconds, settings.agent_requests)
    installed = node_modules(agent, dict(settings.agent_versions).get(agent.name))
    found: list[AnyObserved] = []
    for repetition in range(settings.repeat):
        run = run_agent(agent, context.target, task.task, task.secret, limits, installed,
                        model=agent.model_shape(task.model_shape).model if task.model_shape else None,
                        file_words=task.file_words)
        found += observations(case, run, context.target, repetition)
    return found


judged = evaluate_judged  # a check's own verdict on each request the agent sent


def observations(case: Case, run: AgentRun, target: Target, repetition: int = 0) -> list[AnyObserved]:
    """The run's requests of the case's API as examples, in the order the agent sent them; the last carries the
    checks of the whole run. A run that sent none (the agent could not start, or gave up first) is one example
    with no answer, for those checks to judge."""
    api = api_of(case.api)
    sent = [exchange for exchange in run.http_exchanges
            if exchange.request.method == api.method and _path(exchange, target).split("?", 1)[0] == api.path]
    if not sent:
        over_socket = any(isinstance(exchange, WebSocketExchange) for exchange in run.exchanges)
        why = run.unavailable or (f"{run.label} sent no {api.title} request over HTTP" +
                                  (", only over the WebSocket it opened" if over_socket else "") +
                                  f" ({run.exit_text or run.ended})")
        sent = [HttpExchange(request=HttpRequest(api.method, target.url(api.path), {}, None), error=why,
                             error_kind="exited")]
    described = summary(run)
    examples: list[AnyObserved] = []
    for position, exchange in enumerate(sent):
        example = _example(case, exchange.request.method, _path(exchange, target), exchange.request.body)
        if case.agent_task.file_words and holds_filler(exchange.request.body):
            # A request carrying the file past the context: an overflow, refused as one, as a written case's.
            example = replace(example, overflows_context=True, expect_status="success_or_client_error")
        examples.append(Observed(example, target, exchange, example=described, play=repetition, agent_run=run,
                                 agent_final=position == len(sent) - 1, unsupported=run.unavailable))
    return examples


def holds_filler(body) -> bool:
    """Whether a request carries the filler of a task's file (lmconform.agents.sandbox.task_file): the output of the
    tool that read it."""
    return FILLER_LINE in (body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))


def _path(exchange: HttpExchange, target: Target) -> str:
    return exchange.request.url.removeprefix(target.base_url)


def _example(case: Case, method: str, path: str, body) -> Case:
    agent = case.agent_task
    provenance = {"source": f"sent by the agent {agent.name} through lmconform's relay, for {case.id}"}
    text = body if isinstance(body, str) else None
    return replace(case, method=method, path=path, body=None if text is not None else body, raw_body=text,
                   source=None, provenance=provenance, expect_status="success")


def summary(run: AgentRun) -> str:
    """An agent run as a person reads it: the task, how it ended, and what the agent did and said (the verdict's
    command replays the request it judged)."""
    lines = [f"{run.label} on {run.task!r}: {run.ended}"
             + (f" ({run.exit_text})" if run.exit_text else "") + f", {run.requests} requests in {run.duration_s:.1f} s"]
    outcome = run.outcome
    lines += [f"  ran {tool.shown()}{' (failed)' if tool.failed else ''}" for tool in outcome.tool_runs]
    lines += [f"  retried: {retry}" for retry in outcome.retries]
    lines += [f"  showed the error: {error[:SHOWN_TEXT_CHARS]}" for error in outcome.errors]
    if outcome.final_text is not None:
        lines.append(f"  answered: {outcome.final_text[:SHOWN_TEXT_CHARS]}")
    if run.stderr.strip():
        lines.append("  stderr: " + run.stderr_tail(3).replace("\n", "\n          "))
    if run.prediction:
        lines.append(f"  {run.prediction}")
    return run.shown("\n".join(lines))
