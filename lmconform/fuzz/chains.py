"""A hypothesis state machine over `previous_response_id` chains.

Rules create responses, chain from any earlier one, fork one twice with the same input, answer a function call,
and use an id that was never issued. Invariants hold for any honest server, whatever its model says:
- every answer is a completed response or a 4xx OpenAI error object;
- a chained response echoes its parent's id;
- the same input costs more input tokens chained than alone (the history is in the context);
- two children of one parent with the same input cost the same (a fork, not a shared thread).
A violation shrinks to the shortest sequence of requests and is reported with the curls that replay it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, rule, run_state_machine_as_test

from lmconform.normalize.responses import response_object
from lmconform.wire.http import HttpExchange

Send = Callable[[dict], HttpExchange]

WORDS = ("alpha", "river", "seven", "quartz", "lantern", "maple", "orbit", "velvet", "ember", "tide")
TOOL = {"type": "function", "name": "lookup_word", "description": "Look up a word in the dictionary",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}}
UNKNOWN_ID = "resp_lmconform_never_issued_fuzz"

inputs = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=24)
    .filter(lambda text: text.strip()),
)


@dataclass(frozen=True)
class Node:
    """A response the machine can chain from."""

    id: str
    input_tokens: int | None
    call_id: str | None  # the call_id of its function call, when it made one


class InvariantBroken(AssertionError):
    pass


def build_machine(send: Send, model: str | None, log: list[str]) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one target; `log` receives the curl of every request of the current run."""

    def request(body: dict) -> HttpExchange:
        exchange = send({"model": model, **body} if model else body)
        log.append(exchange.request.curl())
        return exchange

    def completed(exchange: HttpExchange, what: str) -> dict:
        status = exchange.status or 0
        if exchange.error or not 200 <= status < 300:
            raise InvariantBroken(f"{what}: expected a completed response, got HTTP {exchange.status} "
                                  f"{exchange.error or exchange.body_excerpt(200)}")
        response = response_object(exchange)
        if response.get("status") not in ("completed", None) or not isinstance(response.get("id"), str):
            raise InvariantBroken(f"{what}: expected a completed response with an id, got {exchange.body_excerpt(200)}")
        return response

    def node(response: dict) -> Node:
        usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
        calls = [item for item in response.get("output") or [] if isinstance(item, dict)
                 and item.get("type") == "function_call" and isinstance(item.get("call_id"), str)]
        return Node(response["id"], usage.get("input_tokens"), calls[0]["call_id"] if calls else None)

    class ChainMachine(RuleBasedStateMachine):
        responses = Bundle("responses")
        calls = Bundle("calls")

        def __init__(self) -> None:
            super().__init__()
            log.clear()
            self.alone: dict[str, int | None] = {}

        def tokens_alone(self, text: str) -> int | None:
            if text not in self.alone:
                self.alone[text] = node(completed(request({"input": text}), "the same input sent alone")).input_tokens
            return self.alone[text]

        @rule(target=responses, text=inputs)
        def create(self, text: str) -> Node:
            return node(completed(request({"input": text}), "a new response"))

        @rule(target=calls, text=st.sampled_from(WORDS))
        def create_with_call(self, text: str) -> Node:
            return node(completed(request({"input": f"Look up the word {text}", "tools": [TOOL],
                                           "tool_choice": "required"}), "a forced function call"))

        @rule(target=responses, parent=st.one_of(responses, calls), text=inputs)
        def chain(self, parent: Node, text: str) -> Node:
            response = completed(request({"input": text, "previous_response_id": parent.id}), "a chained response")
            if response.get("previous_response_id") != parent.id:
                raise InvariantBroken(f"a chained response echoes previous_response_id {parent.id!r}, "
                                      f"not {response.get('previous_response_id')!r}")
            child = node(response)
            alone = self.tokens_alone(text)
            if child.input_tokens is not None and alone is not None and child.input_tokens <= alone:
                raise InvariantBroken(f"input tokens grow along a chain: {child.input_tokens} chained "
                                      f"vs {alone} for the same input alone; the history was dropped")
            return child

        @rule(parent=responses, text=inputs)
        def fork(self, parent: Node, text: str) -> None:
            first = node(completed(request({"input": text, "previous_response_id": parent.id}), "a first child"))
            second = node(completed(request({"input": text, "previous_response_id": parent.id}), "a second child"))
            if first.input_tokens != second.input_tokens:
                raise InvariantBroken(f"two children of one parent with the same input cost the same: "
                                      f"{first.input_tokens} then {second.input_tokens} input tokens")

        @rule(target=responses, parent=consumes(calls))
        def answer_call(self, parent: Node) -> Node:
            if parent.call_id is None:
                raise InvariantBroken("a forced function call (tool_choice required) came back without a call_id")
            output = {"type": "function_call_output", "call_id": parent.call_id, "output": "a word"}
            return node(completed(request({"input": [output], "previous_response_id": parent.id}),
                                  "the answer to a function call"))

        @rule()
        def unknown_id(self) -> None:
            exchange = request({"input": "Continue.", "previous_response_id": UNKNOWN_ID})
            error = exchange.json.get("error") if isinstance(exchange.json, dict) else None
            if not 400 <= (exchange.status or 0) < 500 or not isinstance(error, dict):
                raise InvariantBroken(f"an unknown previous_response_id gets a 4xx OpenAI error object, "
                                      f"not HTTP {exchange.status} {exchange.body_excerpt(200)}")

    return ChainMachine


@dataclass(frozen=True)
class FuzzFinding:
    invariant: str
    program: str  # the shrunk sequence of rules, as hypothesis prints it
    curls: tuple[str, ...]


def fuzz_chains(send: Send, model: str | None, examples: int, steps: int = 8) -> FuzzFinding | None:
    """Run the machine; None when every invariant held, else the shrunk violation."""
    log: list[str] = []
    machine = build_machine(send, model, log)
    machine_settings = settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, database=None, derandomize=True,
        suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False,
    )
    try:
        run_state_machine_as_test(machine, settings=machine_settings)
    except InvariantBroken as broken:
        program = "\n".join(note for note in getattr(broken, "__notes__", []) if "state" in note or "=" in note)
        return FuzzFinding(str(broken), program, tuple(log))
    return None


def describe(finding: FuzzFinding) -> str:
    return "\n".join([finding.program, "Replay:", *(f"  {curl}" for curl in finding.curls)])
