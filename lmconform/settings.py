"""The settings of a run: what it fills into the requests it sends, how often it sends each case, and how many
requests and answers its sources generate. The target (lmconform.target) is where and how a server is reached; these
are what a run does there, the same whichever target it runs against (and its upstream)."""

from __future__ import annotations

from dataclasses import dataclass

# Generated requests each generated case sends (a chain program counts as the several requests it sends): 50 for
# each of four sources (chat and Responses, valid and invalid) keeps a run against a local model to minutes.
DEFAULT_FUZZ_EXAMPLES = 50
# Requests shrinking a finding of generated requests may send; past them the smallest found so far is reported. A slow
# target (a real model, where each request is a generation) is given fewer.
DEFAULT_FUZZ_SHRINK = 500
FUZZ_MODES = ("positive", "negative", "both")
# A coding agent's run (--agents): how long it may take, and how many requests it may send before it is stopped as
# a loop. The task takes two generations; a real model on a laptop may take minutes over each.
DEFAULT_AGENT_SECONDS = 300.0
DEFAULT_AGENT_REQUESTS = 20


@dataclass(frozen=True)
class RunSettings:
    max_tokens: int | None = None  # filled into requests that set no output cap
    temperature: float | None = None  # filled into requests that set none (0 for repeatable real-model runs)
    repeat: int = 1  # answers per case; a check's verdict is its worst over them (pass^k)
    fuzz_examples: int = DEFAULT_FUZZ_EXAMPLES  # requests each generated case sends; 0 turns fuzzing off
    fuzz_mode: str = "both"  # generated valid requests ("positive"), invalid ones ("negative"), or both
    fuzz_seed: int | None = None  # None: derandomized, the same examples every run
    fuzz_save: str | None = None  # a cases folder (holding <api>/) to write each shrunk finding into, as a case
    fuzz_shrink: int = DEFAULT_FUZZ_SHRINK  # requests shrinking a finding of generated requests may send
    fuzz_sources: tuple[str, ...] = ("chains", "requests")  # the sources of generated requests played
    # Answers in generated wire forms per API sent through the target and straight to the upstream (the reference
    # server), and the seed that draws them; 0 leaves the `streams` source cases out of the run.
    stream_examples: int = 0
    stream_seed: int = 0
    # The coding agents run against the target through lmconform's relay (lmconform.agents), and their limits.
    agents: tuple[str, ...] = ()
    agent_versions: tuple[tuple[str, str], ...] = ()  # (name, exact version) of each agent run at another than its pin
    agent_seconds: float = DEFAULT_AGENT_SECONDS
    agent_requests: int = DEFAULT_AGENT_REQUESTS
