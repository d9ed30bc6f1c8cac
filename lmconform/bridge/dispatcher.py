"""The bridge itself: each incoming line answered, each chat request run as a turn, turns cancelled.

Why asyncio and not threads: a cancel must stop a turn whose upstream read is blocked on a stalled stream. A
task can be cancelled at the await it is blocked on, and the SDK then closes the connection, which ends the
upstream's generation; a thread blocked in a socket read cannot be interrupted from outside. The one blocking
call left, reading stdin, runs in a thread of its own that hands each line to the loop (lmconform.bridge.cli), so
a streaming turn never delays the next message, such as the cancel of that very turn. Only the loop's thread
writes to stdout, so messages never interleave.

Faults applied here, each in one place: `part-after-complete`, `no-complete` and `result-before-complete` in
`_finish`; `request-id-as-string` in `_provide_response`; `tool-call-not-last` in `_run`;
`tool-call-id-repeated` in `_tool_call_id`; `cancel-ignored` in `_cancel_notification`; `dies-on-bad-params` in
`handle_line`; `unknown-part-type` in `_text_part`; `parameters-as-string` in `_tool_call_part`;
`error-as-complete` in `_fail`. `history-never-committed` is in lmconform.bridge.history, the framing faults in
lmconform.bridge.jsonrpc.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from dataclasses import dataclass
from typing import Any

from lmconform import __version__
from lmconform.bridge.agents import Agent, AgentFailure, Event, Text, ToolCallMade, TurnInput
from lmconform.bridge.history import Session, Sessions
from lmconform.bridge.jsonrpc import (
    AGENT_FAILURE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESPONSE_COMPLETE,
    RESPONSE_PART,
    Incoming,
    InvalidRequest,
    Output,
    ParseError,
    parse_line,
)
from lmconform.bridge.params import (
    CANCEL,
    PROVIDE_INFORMATION,
    PROVIDE_RESPONSE,
    PROVIDE_TOKEN_COUNT,
    InvalidParams,
    cancel_request,
    chat_request,
    information_request,
    token_count_request,
)

# strict: a cancelled request still gets one lm/responseComplete and its result, so a client can always close it.
# symposium: neither, as Symposium's bridge does (it drops the request's responder on cancel).
PROFILES = ("strict", "symposium")
EOF_GRACE_SECONDS = 5.0  # after stdin ends, turns still answering get this long before they are cancelled
PANIC_EXIT_STATUS = 101  # what a Rust process exits with when it panics (the `dies-on-bad-params` fault)
MODEL_INFO = {
    "id": "lmconform-bridge", "name": "lmconform reference bridge", "family": "lmconform", "version": __version__,
    "maxInputTokens": 100000, "maxOutputTokens": 100000, "capabilities": {"toolCalling": True},
}

log = logging.getLogger("lmconform.bridge")


def _key(request_id: Any) -> str:
    """Ids compared as JSON: `7` and `"7"` are different requests."""
    return json.dumps(request_id)


@dataclass(eq=False)
class Turn:
    request_id: Any  # as the request sent it; the result's `id`
    wire_id: Any  # the `requestId` of this turn's notifications
    session: Session
    task: asyncio.Task[None] | None = None
    parts_sent: int = 0
    texts_sent: int = 0
    over: bool = False  # ended: answered, failed or cancelled; nothing more is sent for it


class Bridge:
    def __init__(self, agent: Agent, output: Output, *, profile: str = "strict",
                 faults: frozenset[str] = frozenset(), part_delay: float = 0.0) -> None:
        self.agent = agent
        self.output = output
        self.profile = profile
        self.faults = faults
        self.part_delay = part_delay
        self.exit_status: int | None = None  # set when the bridge must stop at once
        self._sessions = Sessions(faults)
        self._turns: dict[str, Turn] = {}  # turns still answering, by request id
        self._tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks
        self._tool_call_ids: list[str] = []  # every toolCallId sent, first first
        self._minted_ids = 0
        self._requests = {PROVIDE_RESPONSE: self._provide_response, PROVIDE_INFORMATION: self._information,
                          PROVIDE_TOKEN_COUNT: self._token_count}
        self._notifications = {CANCEL: self._cancel_notification}

    async def run(self, lines: asyncio.Queue[bytes | None]) -> int:
        """Answer lines until stdin ends (None), then let running turns finish; the exit status."""
        self.output.started()
        while self.exit_status is None:
            line = await lines.get()
            if line is None:
                break
            self.handle_line(line)
        if self.exit_status is not None:
            return self.exit_status
        running = {task for task in self._tasks if not task.done()}
        if running:
            _, late = await asyncio.wait(running, timeout=EOF_GRACE_SECONDS)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        return 0

    def handle_line(self, line: bytes) -> None:
        if not line.strip():
            return  # an empty line carries no message
        try:
            incoming = parse_line(line)
        except ParseError as error:
            self.output.error(None, PARSE_ERROR, f"Parse error: {error}")
            return
        except InvalidRequest as error:
            self.output.error(error.request_id, INVALID_REQUEST, f"Invalid request: {error}")
            return
        if incoming is None:
            return
        try:
            self._dispatch(incoming)
        except InvalidParams as error:
            if "dies-on-bad-params" in self.faults:
                print(f"lmconform bridge: panicked: invalid params for {incoming.method}: {error}", file=sys.stderr)
                self.exit_status = PANIC_EXIT_STATUS
            elif incoming.is_request:
                self.output.error(incoming.request_id, INVALID_PARAMS, f"Invalid params: {error}")
            else:
                log.warning("ignored %s with invalid params: %s", incoming.method, error)
        except Exception as error:  # a defect of the bridge: answered and logged, never the end of the process
            log.exception("%s failed", incoming.method)
            if incoming.is_request:
                self.output.error(incoming.request_id, INTERNAL_ERROR, f"Internal error: {type(error).__name__}")

    def _dispatch(self, incoming: Incoming) -> None:
        if incoming.is_request:
            request_handler = self._requests.get(incoming.method)
            if request_handler is None:
                self.output.error(incoming.request_id, METHOD_NOT_FOUND, f"Method not found: {incoming.method}")
            else:
                request_handler(incoming.request_id, incoming.params)
            return
        # Kept apart as in the source: `lm/cancel` sent as a request is an unknown method, and a request method
        # sent as a notification is ignored.
        notification_handler = self._notifications.get(incoming.method)
        if notification_handler is None:
            log.info("ignored notification %s", incoming.method)  # JSON-RPC: a notification is never answered
        else:
            notification_handler(incoming.params)

    def _information(self, request_id: Any, params: Any) -> None:
        information_request(params)
        self.output.respond(request_id, {"models": [MODEL_INFO]})

    def _token_count(self, request_id: Any, params: Any) -> None:
        text = token_count_request(params)
        # Symposium's heuristic: a token per 4 bytes of UTF-8, at least 1.
        self.output.respond(request_id, {"count": max(1, len(text.encode("utf-8")) // 4)})

    def _provide_response(self, request_id: Any, params: Any) -> None:
        request = chat_request(params)
        arrival = self._sessions.accept(request.agent, list(request.messages))
        session = arrival.session
        if session.streaming is not None:
            self._cancel(session.streaming, f"replaced by request {request_id!r}")
        wire_id = str(request_id) if "request-id-as-string" in self.faults else request_id
        turn = Turn(request_id, wire_id, session)
        session.streaming = self._turns[_key(request_id)] = turn
        turn.task = asyncio.get_running_loop().create_task(
            self._run(turn, TurnInput(arrival, request.tools, request.tool_mode)))
        self._tasks.add(turn.task)
        turn.task.add_done_callback(self._tasks.discard)

    async def _run(self, turn: Turn, turn_input: TurnInput) -> None:
        held: list[ToolCallMade] = []
        try:
            async with contextlib.aclosing(self.agent.answer(turn_input)) as events:
                async for event in events:
                    if isinstance(event, ToolCallMade) and "tool-call-not-last" not in self.faults:
                        held.append(event)  # a tool call ends the answer, whatever the agent says after it
                    else:
                        await self._send(turn, event)
            for call in held:
                await self._send(turn, call)
        except asyncio.CancelledError:
            return  # _cancel has sent what the profile asks for; nothing more may be sent for this id
        except AgentFailure as failure:
            self._fail(turn, str(failure))
            return
        except Exception as error:  # a defect of the bridge: answered, so the client is not left waiting
            log.exception("request %r failed", turn.request_id)
            self._end(turn)
            self.output.error(turn.request_id, INTERNAL_ERROR, f"Internal error: {type(error).__name__}: {error}")
            return
        self._finish(turn)

    async def _send(self, turn: Turn, event: Event) -> None:
        if isinstance(event, Text) and not event.value:
            return
        if self.part_delay and turn.parts_sent:
            await asyncio.sleep(self.part_delay)
        if turn.over:
            return
        part = self._text_part(turn, event.value) if isinstance(event, Text) else self._tool_call_part(event)
        turn.session.record(part)
        turn.parts_sent += 1
        self.output.notify(RESPONSE_PART, {"requestId": turn.wire_id, "part": part})

    def _text_part(self, turn: Turn, value: str) -> dict[str, Any]:
        kind = "thinking" if "unknown-part-type" in self.faults and turn.texts_sent == 0 else "text"
        turn.texts_sent += 1
        return {"type": kind, "value": value}

    def _tool_call_part(self, call: ToolCallMade) -> dict[str, Any]:
        try:
            parameters = json.loads(call.arguments or "{}")
        except ValueError:
            raise AgentFailure(f"the call of {call.name!r} has arguments that are not JSON: {call.arguments!r}") \
                from None
        return {"type": "tool_call", "toolCallId": self._tool_call_id(call.call_id), "toolName": call.name,
                "parameters": call.arguments if "parameters-as-string" in self.faults else parameters}

    def _tool_call_id(self, proposed: str) -> str:
        """The agent's id when it is new, else a fresh one: ids must be unique, and upstreams repeat theirs."""
        if "tool-call-id-repeated" in self.faults and self._tool_call_ids:
            return self._tool_call_ids[0]
        call_id = proposed
        while not call_id or call_id in self._tool_call_ids:
            self._minted_ids += 1
            call_id = f"lmconform-call-{self._minted_ids}"
        self._tool_call_ids.append(call_id)
        return call_id

    def _end(self, turn: Turn) -> None:
        turn.over = True
        if self._turns.get(_key(turn.request_id)) is turn:
            del self._turns[_key(turn.request_id)]
        if turn.session.streaming is turn:
            turn.session.streaming = None

    def _finish(self, turn: Turn) -> None:
        """The end of an answered turn, or in the strict profile of a cancelled one: lm/responseComplete, then the
        result `{}`."""
        self._end(turn)
        if "result-before-complete" in self.faults:
            self.output.respond(turn.request_id, {})
        if "no-complete" not in self.faults:
            self.output.notify(RESPONSE_COMPLETE, {"requestId": turn.wire_id})
        if "part-after-complete" in self.faults:
            self.output.notify(RESPONSE_PART, {"requestId": turn.wire_id, "part": {"type": "text", "value": "…"}})
        if "result-before-complete" not in self.faults:
            self.output.respond(turn.request_id, {})

    def _fail(self, turn: Turn, text: str) -> None:
        """An agent or upstream failure: error -32000 with its text, and no complete."""
        if "error-as-complete" in self.faults:
            self._finish(turn)
            return
        self._end(turn)
        self.output.error(turn.request_id, AGENT_FAILURE, text)

    def _cancel(self, turn: Turn, why: str) -> None:
        if turn.over:
            return
        log.info("request %r cancelled: %s", turn.request_id, why)
        if turn.task is not None:
            turn.task.cancel()  # raised at the await the turn is blocked on; the upstream stream is closed
        if self.profile == "strict":
            self._finish(turn)
        else:
            self._end(turn)

    def _cancel_notification(self, params: Any) -> None:
        request_id = cancel_request(params)
        if "cancel-ignored" in self.faults:
            return
        turn = self._turns.get(_key(request_id))
        if turn is None:
            log.info("cancel of request %r, which is not answering", request_id)  # finished already: nothing to do
        else:
            self._cancel(turn, "lm/cancel")
