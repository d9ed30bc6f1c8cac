"""The bridge's fault catalogue: each fault reproduces one defect a `vscodelm.*` check is meant to catch, and
changes nothing else.

As with the reference server's catalogue (lmconform/reference/faults.py), a check proves itself here: it passes
on the clean bridge and fails on exactly the faults about its defect. So each fault names a single deviation from
the protocol as the design note VSCODELM.md states it, and the code applies it in one place (the docstring of
lmconform/bridge/dispatcher.py says where).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    summary: str
    seen_in: str


_CATALOGUE = (
    Fault("part-after-complete",
          "one more text part for the request follows its `lm/responseComplete` (before the result)",
          "streaming bridges that flush a buffered tail after signalling the end"),
    Fault("no-complete", "a finished turn sends its result `{}` but never `lm/responseComplete`",
          "bridges that take the JSON-RPC result for the end of the stream"),
    Fault("request-id-as-string",
          "`requestId` in notifications is the request's id as a string (`7` becomes `\"7\"`); the result's `id` "
          "is untouched",
          "bridges that key requests by a string; VS Code matches the id by value and type"),
    Fault("tool-call-not-last",
          "a tool call is sent as soon as the agent makes it, so the text the agent says after the call follows "
          "the `tool_call` part (the echo agent always says some)",
          "agents that keep talking after a tool call, forwarded as they come"),
    Fault("tool-call-id-repeated", "every `tool_call` part carries the first `toolCallId` this bridge ever sent",
          "upstreams that number calls per answer (`call_0`), passed through"),
    Fault("history-never-committed",
          "a request that confirms the provisional turn drops it instead of committing it: the committed history "
          "stays empty, and the turn after is taken for an edit of the whole conversation (the echo agent's "
          "answer shows it; the openai agent sends the same conversation either way)",
          "no public report; the defect Symposium's history actor exists to avoid"),
    Fault("cancel-ignored", "`lm/cancel` is ignored: the turn streams on and completes as if never cancelled",
          "bridges without a cancellation path"),
    Fault("dies-on-bad-params",
          "params of the wrong shape end the process (a panic message on stderr, exit 101) instead of an error "
          "`-32602`",
          "symposium-acp-agent vscodelm 2.0.1, from reading its source (not run)"),
    Fault("non-json-stdout-line",
          "a log line that is not JSON (`lmconform bridge ready`) is written to stdout at startup",
          "bridges that log with print()"),
    Fault("message-split-across-lines",
          "`lm/responsePart` notifications are written indented, one message over several lines",
          "bridges that serialise with a pretty-printer"),
    Fault("missing-jsonrpc-version", "messages the bridge writes carry no `\"jsonrpc\": \"2.0\"`",
          "hand-written JSON-RPC encoders"),
    Fault("unknown-part-type",
          "the first text part of each answer is sent as `{\"type\": \"thinking\", \"value\": …}`, a type the "
          "protocol does not have",
          "bridges that forward reasoning as a part type of their own"),
    Fault("result-before-complete", "a finished turn sends its result `{}` before its `lm/responseComplete`",
          "bridges that answer the request first, then notify"),
    Fault("parameters-as-string",
          "a `tool_call` part's `parameters` is the arguments' JSON text, not the parsed object",
          "bridges that forward an OpenAI `arguments` string as it is"),
    Fault("error-as-complete",
          "an agent or upstream failure ends the turn with `lm/responseComplete` and result `{}` instead of error "
          "`-32000`",
          "bridges that swallow the agent's errors"),
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _CATALOGUE}


def parse_faults(names: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(names)
    unknown = sorted(chosen - FAULTS.keys())
    if unknown:
        raise ValueError(f"unknown bridge fault {unknown[0]!r}; known: {', '.join(FAULTS)}")
    return chosen
