"""A source of generated cases: `previous_response_id` programs.

A program is a case of the Responses API whose turns create responses (streamed or not, with or without a forced
function call, or with `store: false`), chain to earlier ones (each chained turn with its control: the same input
alone), fork one twice with the same input, answer a function call, read a response back, list its input, delete it,
read or chain to one the server must have forgotten, and use an id that was never issued. Programs are played and judged like any case,
by the checks that apply to them; the chain checks (lmconform.apis.responses.checks.chain) state the invariants once,
for the hand-written chain cases and the generated ones alike. A program with a finding shrinks to the shortest
one that still has it, and is reported with its turns and the requests that replay it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from hypothesis import strategies as st

from lmconform.api_table import api_of
from lmconform.cases import FIRST, Case, HttpTurn
from lmconform.checks.evaluate import judged as evaluate_judged
from lmconform.checks.observed import AnyObserved
from lmconform.fuzz.search import Search, searched
from lmconform.fuzz.search import search as generic_search
from lmconform.settings import DEFAULT_FUZZ_SHRINK, RunSettings
from lmconform.source import SourceContext

SOURCE = "chains"
STEPS = 8  # at most this many steps a program: each is one or two requests
PROGRAM_COST = 5  # requests a program sends on average, counted against the run's budget of generated examples
WORDS = ("alpha", "river", "seven", "quartz", "lantern", "maple", "orbit", "velvet", "ember", "tide")
TOOL = {"type": "function", "name": "lookup_word", "description": "Look up a word in the dictionary",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}}
UNKNOWN_ID = "resp_lmconform_never_issued_fuzz"
CALL_OUTPUT = "a word"

inputs = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
    # UTF-8's characters but the controls, by category (lmconform.fuzz.bodies says why not by codec)
    st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=24)
    .filter(lambda text: text.strip()),
)


class _Program:
    """Turns being written, with what each earlier one offers: a response to chain to, a call to answer."""

    def __init__(self, source: Case) -> None:
        self.stored_path = api_of(source.api).stored_path or ""  # where a response is read back: `…/{response_id}`
        self.turns: list[HttpTurn] = []
        self.responses: list[str] = []  # names of turns whose answer may be chained to
        self.calls: list[str] = []  # names of turns with a forced call not answered yet
        self.forgotten: list[str] = []  # names of turns whose answer the server must no longer know

    def stored(self, name: str, method: str, suffix: str = "") -> str:
        """A request of `method` to the stored response of turn `name` (`suffix`: `/input_items`)."""
        return self.add({}, method=method, path=re.sub(r"\{\w+\}", f"{{{name}}}", self.stored_path) + suffix)

    def add(self, body: dict, **references) -> str:
        name = FIRST if not self.turns else f"t{len(self.turns)}"
        self.turns.append(HttpTurn(name, body, **references))
        return name


def _step(draw, program: _Program) -> None:
    kinds = ["create", "create_with_call"]
    if program.turns:  # not the request: every turn has the request's fields but its own, `store` too
        kinds += ["unknown_id", "create_unstored"]
    if program.responses:
        kinds += ["chain", "fork", "read", "list_input", "delete"]
    if program.calls:
        kinds.append("answer_call")
    if program.forgotten:
        kinds += ["chain_forgotten", "read_forgotten"]
    kind = draw(st.sampled_from(kinds))
    if kind == "create":
        # Streamed or not: a chain must continue from a streamed response as from any other.
        program.responses.append(program.add({"input": draw(inputs), "stream": draw(st.booleans())}))
    elif kind == "create_unstored":
        program.forgotten.append(program.add({"input": draw(inputs), "store": False}))
    elif kind in ("read", "list_input"):
        program.stored(draw(st.sampled_from(program.responses)), "GET", "/input_items" if kind == "list_input" else "")
    elif kind == "delete":
        deletable: list[str | None] = [name for name in program.responses if name not in program.calls]
        name = draw(st.sampled_from(deletable or [None]))
        if name is not None:  # a call still to answer is kept: its answer would chain to a deleted response
            program.stored(name, "DELETE")
            program.stored(name, "GET")  # read back at once: it must be gone
            program.responses.remove(name)
            program.forgotten.append(name)
    elif kind == "chain_forgotten":
        program.add({"input": draw(inputs)}, previous=draw(st.sampled_from(program.forgotten)))
    elif kind == "read_forgotten":
        program.stored(draw(st.sampled_from(program.forgotten)), "GET")
    elif kind == "create_with_call":
        word = draw(st.sampled_from(WORDS))
        name = program.add({"input": f"Look up the word {word}", "tools": [TOOL], "tool_choice": "required"})
        program.responses.append(name)
        program.calls.append(name)
    elif kind == "chain":
        parent, text = draw(st.sampled_from(program.responses)), draw(inputs)
        program.responses.append(program.add({"input": text}, previous=parent))
        program.add({"input": text})  # the control: the same input alone costs fewer input tokens
    elif kind == "fork":
        parent, text = draw(st.sampled_from(program.responses)), draw(inputs)
        program.add({"input": text}, previous=parent)
        program.add({"input": text}, previous=parent)
    elif kind == "answer_call":
        parent = draw(st.sampled_from(program.calls))
        program.calls.remove(parent)
        program.responses.append(program.add({}, previous=parent, answers_call_of=parent, call_output=CALL_OUTPUT))
    else:
        program.add({"input": "Continue.", "previous_response_id": UNKNOWN_ID})


def as_case(seed_case: Case, turns: list[HttpTurn], index: int) -> Case:
    """A program as a case of its own: the source's request fields, the program's first turn as its request."""
    first, *rest = turns
    body = {key: value for key, value in seed_case.body.items() if key != "input"}
    body.update(first.body)
    provenance = {"source": f"generated by lmconform's {SOURCE} source from {seed_case.id}",
                  "generated": {"source": SOURCE, "example": index}}
    return replace(seed_case, body=body, turns=tuple(rest), source=None, provenance=provenance)


@st.composite
def programs(draw, source: Case) -> Case:
    program = _Program(source)
    for _ in range(draw(st.integers(min_value=1, max_value=STEPS))):
        _step(draw, program)
    return as_case(source, program.turns, 0)


def programs_for(examples: int) -> int:
    """How many programs a budget of `examples` generated requests buys: a program sends several."""
    return -(-examples // PROGRAM_COST)


def representatives(source: Case) -> list[Case]:
    return [representative(source)]


def representative(source: Case) -> Case:
    """A program with one step of every kind, for deciding which checks the source's examples can meet."""
    program = _Program(source)
    first = program.add({"input": "Start of a generated conversation."})
    called = program.add({"input": "Look up the word river", "tools": [TOOL], "tool_choice": "required"})
    program.add({"input": "Continue."}, previous=first)
    program.add({"input": "Continue."})
    program.add({"input": "Fork."}, previous=first)
    program.add({"input": "Fork."}, previous=first)
    program.add({}, previous=called, answers_call_of=called, call_output=CALL_OUTPUT)
    program.add({"input": "Continue.", "previous_response_id": UNKNOWN_ID})
    streamed = program.add({"input": "A streamed start.", "stream": True})
    program.add({"input": "Continue."}, previous=streamed)
    program.stored(streamed, "GET")
    program.stored(streamed, "GET", "/input_items")
    program.stored(streamed, "DELETE")
    program.stored(streamed, "GET")
    program.add({"input": "Continue."}, previous=streamed)
    unstored = program.add({"input": "Not to be kept.", "store": False})
    program.stored(unstored, "GET")
    program.add({"input": "Continue."}, previous=unstored)
    return as_case(source, program.turns, 0)


def search(source: Case, play: Callable[[Case], AnyObserved], has_finding: Callable[[AnyObserved], bool],
           examples: int, seed: int | None = None, shrink_plays: int = DEFAULT_FUZZ_SHRINK) -> Search:
    """Up to `examples` programs (see `programs_for`), each played; the first with a finding shrunk."""
    return generic_search(programs(source), play, has_finding, programs_for(examples), seed, shrink_plays)


def describe(observed: AnyObserved) -> str:
    """A generated program as a person reads it: its turns, then every request that replays it."""
    case = observed.case
    lines = [f"{case.provenance['source']}, example {case.provenance['generated'].get('example')}:",
             f"  {FIRST}: {_shown(HttpTurn(FIRST, case.body))}"]
    for turn in observed.case.turns_of(HttpTurn):  # each played, in order (observed.turns)
        references = ", ".join(f"{key} {value}" for key, value in (("previous", turn.previous),
                                                                  ("answers the call of", turn.answers_call_of)) if value)
        lines.append(f"  {turn.name}: {_shown(turn)}{f' ({references})' if references else ''}")
    lines.append("Replay:")
    lines.append(f"  {observed.exchange.request.reproduction()}")
    lines += [f"  {played.exchange.request.reproduction()}" for played in observed.turns.values() if played.exchange]
    return "\n".join(lines)


def _shown(turn: HttpTurn) -> str:
    if turn.method is not None:
        return f"{turn.method} {turn.path}"
    return ", ".join(f"{key}={value!r}"[:80] for key, value in turn.body.items() if key != "tools") \
        or "(the call's output)"


# What the run asks of a source (lmconform.source): its cases are always part of a run, which plays none of their
# examples when its settings leave them out; a check's verdict on an example is the check's own.
judged = evaluate_judged


def takes_part(case: Case, settings: RunSettings) -> bool:
    return True


def examples(case: Case, context: SourceContext) -> list[AnyObserved]:
    return searched(case, context, SOURCE, search, describe)
