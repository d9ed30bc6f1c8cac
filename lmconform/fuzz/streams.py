"""A source of generated cases: the same answers in generated wire forms (`"source": "streams"`).

An example is a streamed request whose prompt names a form of lmconform's reference server
(`lmconform-stream=SEED:FEATURE,...`, lmconform.reference.streams): the reference server answers it with the clean
generation of the request, written in that form. The prompt's own words (characters of every UTF-8 length, line
separators that are not SSE line ends), whether the answer reasons, calls one tool or two, and reports usage are
drawn too. Sent through a proxy whose upstream is the reference server, every example must reach the client as it
left the upstream; sent straight to the reference server, every example must pass every wire and semantic check.

A finding shrinks to the fewest features that still cause it, one feature taken away at a time, and reads as what
those features did ("CRLF line ends + a 4-byte character split across writes") with the request that replays it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from lmconform.cases import Case
from lmconform.checks.evaluate import Verdict, evaluate
from lmconform.checks.observed import AnyObserved, Observed
from lmconform.checks.registry import Check
from lmconform.fuzz.draws import independent_of_imports
from lmconform.fuzz.requests import generated_requests
from lmconform.reference.streams import FORM_HEADER, PLAIN_SHOWS, SHOWS_HEADER, TAG, Form, features_of, parse_form
from lmconform.reference.streams.form import LINE_ENDS
from lmconform.settings import RunSettings
from lmconform.source import SourceContext
from lmconform.vocabulary import FINDINGS, Outcome
from lmconform.wire.http import HttpExchange

# What a search counts and shrinks: what fails a run, and a check that could not judge what it was given.
COUNTED = frozenset({Outcome.FAILED, Outcome.NON_STRICT, Outcome.ERROR})

SOURCE = "streams"
GENERATION_CHECK = "proxy.diff.generation_preserved"
SHRINK_SEEDS = 4  # seeds a shrink tries each feature alone under
CITIES = ("Zürich", "Łódź", "Αθήνα", "Ísafjörður", "Москва", "\U0001d49crkham", "Quito")
# Characters of every UTF-8 length, and line separators a splitlines() would cut at but SSE does not.
ODD = ("é", "ß", "東京", "€", "✓", "😀", "\U0001f469\u200d\U0001f4bb", "\u2028", "\u2029", "\u0085", "\n", "\r", "\t")
WORDS = st.one_of(
    # UTF-8's characters but the controls, by category (lmconform.fuzz.bodies says why not by codec)
    st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=12),
    st.sampled_from(ODD),
    st.sampled_from(("hello", "the", "stream", "data:", ": not a comment", "[DONE]", "event: x")),
)
UNITS = ["celsius ☀", "fahrenheit 🌡"]
TOOLS = (
    {"name": "get_weather", "description": "Get the current weather for a location",
     "parameters": {"type": "object", "properties": {"location": {"type": "string"},
                                                     "unit": {"type": "string", "enum": UNITS}},
                    "required": ["location"]}},
    {"name": "get_time", "description": "Get the local time in a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
)


@dataclass(frozen=True)
class Example:
    api: str
    words: str  # the prompt's own words
    city: str  # what a tool call's arguments name
    think: bool  # the answer reasons first
    calls: int  # tools the prompt asks for: 0, 1 or 2
    usage: bool  # the usage chunk asked for (chat's stream_options.include_usage), where the API's streams have one
    form: Form

    def prompt(self) -> str:
        asked = ("", " What is the weather", " What are the weather and the time")[self.calls]
        think = " Think it over." if self.think else ""
        return f"{self.words}{think}{asked} in {self.city}? {TAG}{self.form}"

    def body(self) -> dict:
        return generated_requests(self.api).stream_request(self.prompt(), TOOLS if self.calls else (), self.usage)

    def in_form(self, form: Form) -> Example:
        return replace(self, form=form)


@st.composite
def answers(draw, api: str) -> Example:
    """Examples of one API; shrinking turns features off first, then simplifies the words."""
    optional = [name for name in features_of(api) if name not in LINE_ENDS]
    chosen = draw(st.fixed_dictionaries({name: st.booleans() for name in optional}))
    line_end = draw(st.sampled_from((None, *LINE_ENDS)))
    features = {name for name, on in chosen.items() if on} | ({line_end} if line_end else set())
    form = Form(draw(st.integers(min_value=0, max_value=2**32 - 1)), frozenset(features))
    words = " ".join(draw(st.lists(WORDS, max_size=4)))
    return Example(api, words, draw(st.sampled_from(CITIES)), draw(st.booleans()), draw(st.integers(0, 2)),
                   generated_requests(api).STREAM_USAGE and draw(st.booleans()), form)


def drawn(api: str, count: int, seed: int = 0) -> list[Example]:
    """`count` examples, the same ones for the same seed (with the same hypothesis)."""
    found: list[Example] = []
    if count <= 0:
        return found

    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(answers(api))
    def collect(example: Example) -> None:
        found.append(example)

    with independent_of_imports():
        hypothesis_seed(seed)(collect)()
    return found[:count]


def as_case(source: Case, example: Example, index: int) -> Case:
    """An example as a case of its own: the source's request fields, the example's prompt and options."""
    body = {key: value for key, value in source.body.items()
            if key not in ("messages", "input", "tools", "stream_options")}
    body.update(example.body())
    provenance = {"source": f"generated by lmconform's {SOURCE} source from {source.id}", "example": index,
                  "form": str(example.form)}
    return replace(source, body=body, source=None, provenance=provenance)


def representatives(source: Case) -> list[Case]:
    """An example that asks for everything (tools, usage, reasoning), for deciding which checks judge the source."""
    usage = generated_requests(source.api).STREAM_USAGE
    return [as_case(source, Example(source.api, "", CITIES[0], True, 2, usage, Form(0, frozenset())), 0)]


def played_form(observed: AnyObserved) -> Form | None:
    """The form the answer was written in, by the features that changed something (from the reference server's
    header, straight or through the proxy); None when no reference server said."""
    for exchange in (observed.upstream_exchange, observed.exchange):
        named = exchange.headers.get(FORM_HEADER.lower()) if isinstance(exchange, HttpExchange) else None
        if named:
            try:
                return parse_form(named)
            except ValueError:
                continue
    return None


def shows(observed: AnyObserved) -> str:
    for exchange in (observed.upstream_exchange, observed.exchange):
        text = exchange.headers.get(SHOWS_HEADER.lower()) if isinstance(exchange, HttpExchange) else None
        if text:
            return text
    form = played_form(observed)
    return "the form " + str(form) if form else PLAIN_SHOWS


def describe(observed: AnyObserved) -> str:
    """An example as a person reads it: its form, what the form did, and the requests that replay it."""
    case = observed.case
    form = played_form(observed) or parse_form(case.provenance["form"])
    lines = [f"{case.provenance['source']}, example {case.provenance.get('example')}:",
             f"  form {form}: {shows(observed)}",
             "Replay:", f"  {observed.exchange.request.reproduction()}"]
    if observed.upstream_exchange is not None:
        lines += ["Straight from the upstream:", f"  {observed.upstream_exchange.request.reproduction()}"]
    return "\n".join(lines)


@dataclass(frozen=True)
class Finding:
    """What goes wrong (`key`: a check id, with the part of the generation for the generation check) and the
    smallest form found that still makes it go wrong, as it was played."""

    key: str
    observed: AnyObserved
    form: Form
    cause: str  # what the form did, or PLAIN_SHOWS: it goes wrong whatever the framing


@dataclass(frozen=True)
class Search:
    """What a search played: the examples without a finding, each finding shrunk, and how many examples each
    shrunk form accounts for (by the form's name)."""

    kept: tuple[AnyObserved, ...]
    findings: tuple[Finding, ...]
    examples_of: dict[str, int]
    played: tuple[AnyObserved, ...]  # every example as first played


Play = Callable[[Case], AnyObserved]
FindingsOf = Callable[[AnyObserved], frozenset[str]]


def search(source: Case, play: Play, findings_of: FindingsOf, examples: int, seed: int = 0) -> Search:
    """Play `examples` generated examples of the source's API. Each thing that goes wrong is shrunk unless a form
    already shrunk for it holds no feature the example lacks; what else goes wrong in the shrunk form is put down
    to the same form."""
    kept: list[AnyObserved] = []
    played: list[AnyObserved] = []
    findings: list[Finding] = []
    examples_of: dict[str, int] = {}
    for index, example in enumerate(drawn(source.api, examples, seed)):
        observed = play(as_case(source, example, index))
        played.append(observed)
        keys = findings_of(observed)
        if not keys:
            kept.append(observed)
            continue
        form = played_form(observed) or example.form
        explaining: set[str] = set()
        for key in sorted(keys):
            known = next((found for found in findings if found.key == key and found.form.features <= form.features),
                         None)
            if known is None:
                known = _shown_by_earlier(source, example.in_form(form), index, key, findings, play, findings_of)
            if known is None:
                known = _shrunk(source, example.in_form(form), index, key, observed, play, findings_of)
                also = findings_of(known.observed) & keys
                findings += [replace(known, key=other) for other in sorted(also)
                             if other != key and not any(found.key == other for found in findings)]
                findings.append(known)
            explaining.add(str(known.form))
        for name in explaining:
            examples_of[name] = examples_of.get(name, 0) + 1
    return Search(tuple(kept), tuple(findings), examples_of, tuple(played))


def _shown_by_earlier(source: Case, example: Example, index: int, key: str, findings: list[Finding], play: Play,
                      findings_of: FindingsOf) -> Finding | None:
    """`key` in the smallest form already shrunk for another finding, when the example holds its features: one
    cause often makes several things go wrong, and is then one row rather than one per shrink's luck."""
    smaller = sorted({found.form.features for found in findings if found.form.features <= example.form.features},
                     key=lambda features: (len(features), sorted(features)))
    for features in smaller:
        form = Form(example.form.seed, features)
        answer = play(as_case(source, example.in_form(form), index))
        if key in findings_of(answer):
            form = played_form(answer) or form
            return Finding(key, answer, form, shows(answer) if form.features else PLAIN_SHOWS)
    return None


def _shrunk(source: Case, example: Example, index: int, key: str, observed: AnyObserved, play: Play,
            findings_of: FindingsOf) -> Finding:
    """The smallest form found that still has `key`: no feature at all, or one feature alone (under the
    example's seed, then under a few others: where a write is cut depends on every byte before it, so a feature
    that splits a character with others on may split none alone under the same seed), or else the example's
    features taken away one at a time, each kept away if `key` still goes wrong without it."""
    tried: set[tuple[int, frozenset[str]]] = {(example.form.seed, example.form.features)}

    def has_key(form: Form) -> AnyObserved | None:
        tried.add((form.seed, form.features))
        answer = play(as_case(source, example.in_form(form), index))
        return answer if key in findings_of(answer) else None

    form = example.form
    seeds = [form.seed, *(_other_seed(form.seed, turn) for turn in range(1, SHRINK_SEEDS))]
    smaller = [Form(form.seed, frozenset()),
               *(Form(seed, frozenset({name})) for seed in seeds for name in form.ordered())]
    for candidate in smaller:
        if (candidate.seed, candidate.features) not in tried and (answer := has_key(candidate)) is not None:
            form, observed = played_form(answer) or candidate, answer
            break
    else:
        for feature in example.form.ordered():
            candidate = form.without(feature)
            if feature in form.features and (candidate.seed, candidate.features) not in tried \
                    and (answer := has_key(candidate)):
                form, observed = played_form(answer) or candidate, answer
    return Finding(key, observed, form, shows(observed) if form.features else PLAIN_SHOWS)


def _other_seed(seed: int, turn: int) -> int:
    return (seed * 2654435761 + turn) % 2**32


# --- judging an example that went through a proxy -------------------------------------------------------------------


def straight(observed: AnyObserved) -> AnyObserved | None:
    """The example as the upstream answered it straight, judged as an answer of its own."""
    if observed.upstream_exchange is None:
        return None
    return Observed(observed.case, observed.upstream_target or observed.target, observed.upstream_exchange,
                    example=observed.example)


def judged(check: Check, observed: AnyObserved) -> Verdict | None:
    """`check`'s verdict on the proxy's answer to an example. A check the upstream's own answer fails as well is
    no finding about the proxy: the form is legal, a client reads it wrongly, and the proxy passed it on as it
    was (the verdict says so)."""
    verdict = evaluate(check, observed)
    if verdict is None or verdict.outcome not in FINDINGS or check.kind == "differential":
        return verdict
    upstream = straight(observed)
    there = evaluate(check, upstream) if upstream is not None else None
    if there is None or there.outcome is not verdict.outcome:
        return verdict
    said = "; ".join(failure.actual for failure in there.failures[:1])
    return replace(verdict, outcome=Outcome.OK, failures=(),
                   notes=(*verdict.notes, f"passed through: the upstream's answer fails it too ({said})"))


def keys_of(verdict: Verdict) -> set[str]:
    """What a verdict found: its check, and for the generation, each part a client sees differently."""
    if verdict.check.id != GENERATION_CHECK or not verdict.failures:
        return {verdict.check.id}
    return {f"{verdict.check.id} ({failure.expected.split(':', 1)[0]})" for failure in verdict.failures}


def findings_by(checks: list[Check]) -> Callable[[AnyObserved], frozenset[str]]:
    """What goes wrong with an example through the proxy, by `checks`: one key when no answer came at all."""
    def findings_of(observed: AnyObserved) -> frozenset[str]:
        if observed.exchange.error:
            return frozenset({f"no answer ({observed.exchange.error_kind})"})
        found: set[str] = set()
        for check in checks:
            if check.applies(observed.case):
                verdict = judged(check, observed)
                if verdict is not None and verdict.outcome in COUNTED:
                    found |= keys_of(verdict)
        return frozenset(found)

    return findings_of


# What the run asks of a source (lmconform.source).
def takes_part(case: Case, settings: RunSettings) -> bool:
    """Its cases are part of a run that sends generated answers through the target (--upstream-fuzz)."""
    return settings.stream_examples > 0


def examples(case: Case, context: SourceContext) -> list[AnyObserved]:
    """The generated answers through the target (a proxy) and straight to the upstream: those without a finding, and
    each finding shrunk to the smallest form that still has it. Without generated answers to send, the case is its
    own plain request, played as written."""
    settings = context.settings
    if not settings.stream_examples:
        return context.written(case)

    def play_example(example: Case) -> AnyObserved:
        observed = context.play(example)
        observed.example = describe(observed)
        return observed

    # Judged by every check the run could hold the target to, selected or not, as generated requests are.
    found = search(case, play_example, findings_by(list(context.checks)), settings.stream_examples,
                   settings.stream_seed)
    return [*found.kept, *(finding.observed for finding in found.findings)]
