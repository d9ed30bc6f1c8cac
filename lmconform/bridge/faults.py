"""The bridge's fault catalogue: each fault reproduces one defect a `vscodelm.*` check is meant to catch, and
changes nothing else.

As with the reference server's catalogue (lmconform/reference/faults/), a check proves itself here: it passes
on the clean bridge and fails on exactly the faults about its defect. So each fault names a single deviation from
the protocol, and the code applies it in one place (the docstring of lmconform/bridge/dispatcher.py says where).
Which checks fail with each fault is not declared here: `make catalogue` runs the suite's vscodelm cases against the
bridge with it and writes them to the fault × check table (fixtures/catalogue.toml), and
tests/test_bridge_catalogue.py compares new runs with it. What a fault leaves without a verdict is declared (its
`no_verdict`); those ids are plain strings, since the bridge depends on nothing of the suite's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lmconform.command_line import unknown_name


@dataclass(frozen=True)
class Fault:
    name: str
    summary: str
    seen_in: str
    # Shown only when the agent fails: the openai agent in front of an endpoint that refuses connections.
    needs_failing_agent: bool = False
    # Checks the fault leaves without a verdict (ERROR: the process died; UNSUPPORTED: no echo line to read).
    no_verdict: frozenset[str] = frozenset()


def _checks(*ids: str) -> frozenset[str]:
    return frozenset(ids)


_CATALOGUE = (
    Fault("part-after-complete",
          "one more text part for the request follows its `lm/responseComplete` (before the result)",
          "streaming bridges that flush a buffered tail after signalling the end"),
    Fault("no-complete",
          "a finished turn sends its result `{}` but never `lm/responseComplete`",
          "bridges that take the JSON-RPC result for the end of the stream"),
    Fault("request-id-as-string",
          "`requestId` in notifications is the request's id as a string (`7` becomes `\"7\"`); the result's `id` is "
          "untouched",
          "bridges that key requests by a string; VS Code matches the id by value and type"),
    Fault("tool-call-not-last",
          "a tool call is sent as soon as the agent makes it, so the text the agent says after the call follows the "
          "`tool_call` part (the echo agent always says some)",
          "agents that keep talking after a tool call, forwarded as they come"),
    Fault("tool-call-id-repeated",
          "every `tool_call` part carries the first `toolCallId` this bridge ever sent",
          "upstreams that number calls per answer (`call_0`), passed through"),
    Fault("history-never-committed",
          "a request that confirms the provisional turn drops it instead of committing it: the committed history "
          "stays empty, and the turn after is taken for an edit of the whole conversation (the echo agent's answer "
          "shows it; the openai agent sends the same conversation either way)",
          "no public report; the defect Symposium's history actor exists to avoid"),
    Fault("cancel-ignored",
          "`lm/cancel` is ignored: the turn streams on and completes as if never cancelled",
          "bridges without a cancellation path"),
    Fault("dies-on-bad-params",
          "params of the wrong shape end the process (a panic message on stderr, exit 101) instead of an error "
          "`-32602`",
          "symposium-acp-agent vscodelm 2.0.1, from reading its source (not run)",
          no_verdict=_checks("vscodelm.framing.line_is_json", "vscodelm.framing.one_message_per_line",
                             "vscodelm.framing.jsonrpc_version", "vscodelm.framing.known_id")),
    Fault("non-json-stdout-line",
          "a log line that is not JSON (`lmconform bridge ready`) is written to stdout at startup",
          "bridges that log with print()"),
    Fault("message-split-across-lines",
          "`lm/responsePart` notifications are written indented, one message over several lines",
          "bridges that serialise with a pretty-printer"),
    Fault("missing-jsonrpc-version",
          "messages the bridge writes carry no `\"jsonrpc\": \"2.0\"`",
          "hand-written JSON-RPC encoders"),
    Fault("unknown-part-type",
          "each answer's text is preceded by a part `{\"type\": \"thinking\", \"value\": …}`, a type the protocol "
          "does not have",
          "bridges that forward reasoning as a part type of their own"),
    Fault("result-before-complete",
          "a finished turn sends its result `{}` before its `lm/responseComplete`",
          "bridges that answer the request first, then notify"),
    Fault("parameters-as-string",
          "a `tool_call` part's `parameters` is the arguments' JSON text, not the parsed object",
          "bridges that forward an OpenAI `arguments` string as it is"),
    Fault("result-id-as-string",
          "a response's `id` is the request's id as a string (`7` becomes `\"7\"`); notifications are untouched",
          "bridges that keep pending requests in a map keyed by strings"),
    Fault("tool-result-refused",
          "a request whose last message carries a `tool_result` is answered with error `-32602` instead of the "
          "agent's continuation",
          "bridges that accept only text parts in the history"),
    Fault("unknown-method-invalid-request",
          "a request for an unknown method is answered with `-32600` (invalid request) instead of `-32601`",
          "dispatchers that answer every message they cannot route with one error code"),
    Fault("parse-error-ignored",
          "a line that is not JSON is logged and dropped: no `-32700` error is sent",
          "line readers that skip what they cannot parse"),
    Fault("cancel-unknown-answered",
          "an `lm/cancel` naming a request that is not being answered gets an error `-32602` with `id: null`",
          "JSON-RPC servers that answer the notifications they cannot act on"),
    Fault("model-info-without-capabilities",
          "the model information leaves out `capabilities`",
          "bridges written against an older LanguageModelChatInformation"),
    Fault("token-count-zero",
          "token counts are bytes / 4 rounded down, with no minimum: a text under 4 bytes counts 0",
          "a 4-bytes-a-token heuristic without Symposium's floor of 1"),
    Fault("error-as-complete",
          "an agent or upstream failure ends the turn with `lm/responseComplete` and result `{}` instead of error "
          "`-32000`",
          "bridges that swallow the agent's errors",
          needs_failing_agent=True,
          no_verdict=_checks("vscodelm.history.commit", "vscodelm.history.discard")),
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _CATALOGUE}


def parse_faults(names: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(names)
    unknown = sorted(chosen - FAULTS.keys())
    if unknown:
        raise ValueError(unknown_name("bridge fault", unknown[0], FAULTS, "`lmconform bridge --list-faults`"))
    return chosen
