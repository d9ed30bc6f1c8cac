"""Framing: what a client that reads the bridge's stdout line by line and parses each line as JSON-RPC 2.0 needs."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.vscodelm.checks.common import BridgeObserved, process, responses, unsent
from lmconform.apis.vscodelm.checks.scope import vscodelm
from lmconform.checks.refs import JSONRPC_RESPONSE, JSONRPC_SPEC, SYMPOSIUM_VSCODELM
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level


@check("vscodelm.framing.line_is_json", level=Level.MUST, applies=vscodelm, ref=SYMPOSIUM_VSCODELM,
       title="every line the bridge writes on stdout is a JSON message", proven_by=("non-json-stdout-line",))
def line_is_json(observed: BridgeObserved) -> Iterator[Failure]:
    # The client parses each line; one stray line (a log written with print) is an error in the client, and the
    # line is lost. A message written over several lines is `one_message_per_line`'s.
    for line in process(observed).stdout.garbage:
        yield Failure("a JSON-RPC message on the line", "a line that is not JSON", str(line))


@check("vscodelm.framing.one_message_per_line", level=Level.MUST, applies=vscodelm, ref=SYMPOSIUM_VSCODELM,
       title="each message is written on one line, never split over several", proven_by=("message-split-across-lines",))
def one_message_per_line(observed: BridgeObserved) -> Iterator[Failure]:
    # A client splits stdout on newlines: each line of an indented message fails to parse, and the message is lost.
    for message in process(observed).stdout.messages:
        if message.split:
            yield Failure("one message on one line", f"one message over {len(message.lines)} lines", str(message))


@check("vscodelm.framing.jsonrpc_version", level=Level.MUST, applies=vscodelm, ref=JSONRPC_SPEC,
       title='every message is a JSON object with "jsonrpc": "2.0"', proven_by=("missing-jsonrpc-version",))
def jsonrpc_version(observed: BridgeObserved) -> Iterator[Failure]:
    for message in process(observed).stdout.messages:
        if not isinstance(message.value, dict):
            yield Failure("a JSON object", f"a JSON {type(message.value).__name__}", str(message))
        elif message.value.get("jsonrpc") != "2.0":
            shown = json.dumps(message.value["jsonrpc"]) if "jsonrpc" in message.value else "no `jsonrpc`"
            yield Failure('"jsonrpc": "2.0"', shown, str(message))


@check("vscodelm.framing.known_id", level=Level.MUST, applies=vscodelm, ref=JSONRPC_RESPONSE,
       title="every response carries the id of a request the client sent, with its JSON type",
       proven_by=("result-id-as-string",))
def known_id(observed: BridgeObserved) -> Iterator[Failure]:
    # A client finds the pending request by id, as it sent it: `"7"` answers no request sent as 7. `null` is the id
    # of an error about a message whose id could not be read.
    for message in responses(observed):
        if "id" not in message.value:
            yield Failure("an `id`", "a response without one", str(message))
        elif message.value["id"] is not None and (wrong := unsent(observed, message.value["id"], "id")):
            yield Failure(*wrong, str(message))
