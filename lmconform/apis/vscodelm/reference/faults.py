"""The reference VS Code bridge's fault catalogue (lmconform.bridge): each fault reproduces one defect a `vscodelm.*`
check is meant to catch, and changes nothing else. They are flags of the one fault registry
(lmconform.reference.faults.registry), which the bridge's dispatcher tests by name, in the one place each applies
(lmconform/bridge/dispatcher.py's docstring says where).

As with the reference server's catalogue, a check proves itself here: it passes on the clean bridge and fails on
exactly the faults about its defect. Which checks fail with each is not declared: `make catalogue` runs the suite's
vscodelm cases against the bridge with it and writes them to the fault × check table (fixtures/catalogue.toml), and
tests/test_bridge_catalogue.py compares new runs with it. What a fault leaves without a verdict is declared (its
`no_verdict`): those ids are plain strings, since the bridge depends on nothing of the suite's.
"""

from lmconform.reference.faults.registry import flag

# In catalogue order.
flag("part-after-complete",
     summary="one more text part for the request follows its `lm/responseComplete` (before the result)",
     seen_in="streaming bridges that flush a buffered tail after signalling the end")
flag("no-complete",
     summary="a finished turn sends its result `{}` but never `lm/responseComplete`",
     seen_in="bridges that take the JSON-RPC result for the end of the stream")
flag("request-id-as-string",
     summary="`requestId` in notifications is the request's id as a string (`7` becomes `\"7\"`); the result's `id` is "
             "untouched",
     seen_in="bridges that key requests by a string; VS Code matches the id by value and type")
flag("tool-call-not-last",
     summary="a tool call is sent as soon as the agent makes it, so the text the agent says after the call follows the "
             "`tool_call` part (the echo agent always says some)",
     seen_in="agents that keep talking after a tool call, forwarded as they come")
flag("tool-call-id-repeated",
     summary="every `tool_call` part carries the first `toolCallId` this bridge ever sent",
     seen_in="upstreams that number calls per answer (`call_0`), passed through")
flag("history-never-committed",
     summary="a request that confirms the provisional turn drops it instead of committing it: the committed history "
             "stays empty, and the turn after is taken for an edit of the whole conversation (the echo agent's answer "
             "shows it; the openai agent sends the same conversation either way)",
     seen_in="no public report; the defect Symposium's history actor exists to avoid")
flag("cancel-ignored",
     summary="`lm/cancel` is ignored: the turn streams on and completes as if never cancelled",
     seen_in="bridges without a cancellation path")
flag("dies-on-bad-params",
     summary="params of the wrong shape end the process (a panic message on stderr, exit 101) instead of an error "
             "`-32602`",
     seen_in="symposium-acp-agent vscodelm 2.0.1, from reading its source (not run)",
     no_verdict=frozenset({"vscodelm.framing.line_is_json", "vscodelm.framing.one_message_per_line",
                          "vscodelm.framing.jsonrpc_version", "vscodelm.framing.known_id"}))
flag("non-json-stdout-line",
     summary="a log line that is not JSON (`lmconform bridge ready`) is written to stdout at startup",
     seen_in="bridges that log with print()")
flag("message-split-across-lines",
     summary="`lm/responsePart` notifications are written indented, one message over several lines",
     seen_in="bridges that serialise with a pretty-printer")
flag("missing-jsonrpc-version",
     summary="messages the bridge writes carry no `\"jsonrpc\": \"2.0\"`",
     seen_in="hand-written JSON-RPC encoders")
flag("unknown-part-type",
     summary="each answer's text is preceded by a part `{\"type\": \"thinking\", \"value\": …}`, a type the protocol "
             "does not have",
     seen_in="bridges that forward reasoning as a part type of their own")
flag("result-before-complete",
     summary="a finished turn sends its result `{}` before its `lm/responseComplete`",
     seen_in="bridges that answer the request first, then notify")
flag("parameters-as-string",
     summary="a `tool_call` part's `parameters` is the arguments' JSON text, not the parsed object",
     seen_in="bridges that forward an OpenAI `arguments` string as it is")
flag("result-id-as-string",
     summary="a response's `id` is the request's id as a string (`7` becomes `\"7\"`); notifications are untouched",
     seen_in="bridges that keep pending requests in a map keyed by strings")
flag("tool-result-refused",
     summary="a request whose last message carries a `tool_result` is answered with error `-32602` instead of the "
             "agent's continuation",
     seen_in="bridges that accept only text parts in the history")
flag("unknown-method-invalid-request",
     summary="a request for an unknown method is answered with `-32600` (invalid request) instead of `-32601`",
     seen_in="dispatchers that answer every message they cannot route with one error code")
flag("parse-error-ignored",
     summary="a line that is not JSON is logged and dropped: no `-32700` error is sent",
     seen_in="line readers that skip what they cannot parse")
flag("cancel-unknown-answered",
     summary="an `lm/cancel` naming a request that is not being answered gets an error `-32602` with `id: null`",
     seen_in="JSON-RPC servers that answer the notifications they cannot act on")
flag("model-info-without-capabilities",
     summary="the model information leaves out `capabilities`",
     seen_in="bridges written against an older LanguageModelChatInformation")
flag("token-count-zero",
     summary="token counts are bytes / 4 rounded down, with no minimum: a text under 4 bytes counts 0",
     seen_in="a 4-bytes-a-token heuristic without Symposium's floor of 1")
flag("error-as-complete",
     summary="an agent or upstream failure ends the turn with `lm/responseComplete` and result `{}` instead of error "
             "`-32000`",
     seen_in="bridges that swallow the agent's errors",
     needs_failing_agent=True,
     no_verdict=frozenset({"vscodelm.history.commit", "vscodelm.history.discard"}))
