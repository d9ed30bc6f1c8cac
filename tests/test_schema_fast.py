"""The fast validity check (lmconform.schemas.fast) against jsonschema, for every payload schema under every profile:
on the real answers of the reference server and of the captured real servers the two agree (a healthy answer takes
the fast path), and on random changes of them and on arbitrary JSON the fast check never accepts what jsonschema
rejects. It may reject what jsonschema accepts (its `$` is ECMA 262's end of input, where Python's also matches
before a final newline): that payload goes to jsonschema, which decides, so it costs only time. Since the fast
check only ever skips jsonschema for a payload it finds valid, that is what keeps every finding as jsonschema
gives it."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import budget
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmconform.run import run_suite
from lmconform.schemas import PAYLOAD_SCHEMAS, PROFILE_OVERLAYS, event_schemas, schema_for, schema_set
from lmconform.schemas.fast import _dollars_in_sets_escaped
from lmconform.settings import RunSettings
from lmconform.target import Target
from tools.targets.captures import CAPTURES, replayed

PAYLOADS = sorted({path for (_, kind), path in PAYLOAD_SCHEMAS.items() if kind != "request"}
                  | {path for api, kind in PAYLOAD_SCHEMAS if kind == "event" for path in event_schemas(api).values()}
                  | {"chat/chunk.json", "chat/error.json"})
CAPTURED = sorted(path.name for path in CAPTURES.iterdir() if path.is_dir())


def _payloads(observed) -> list[tuple[str, str, Any]]:
    found = []
    for exchange in [observed.exchange, *(p.exchange for p in observed.turns.values() if p.exchange)]:
        if exchange.status is None:
            continue
        if exchange.is_event_stream and exchange.status < 300:
            found += [(observed.case.api, "event", json.loads(event.data)) for event in exchange.sse.events
                      if event.data.strip() != "[DONE]"]
        elif isinstance(exchange.json, dict):
            found.append((observed.case.api, "error" if exchange.status >= 400 else "body", exchange.json))
    return [(api, kind, payload) for api, kind, payload in found if (api, kind) in PAYLOAD_SCHEMAS]


@pytest.fixture(scope="module")
def real_payloads(server) -> list[tuple[str, str, Any]]:
    run = run_suite(Target(base_url=server.base_url, profile="reference"), include=["schema.*"],
                    settings=RunSettings(fuzz_examples=0))
    found = [payload for seen in run.observations().values() for payload in _payloads(seen)]
    for name in CAPTURED:
        found += [payload for seen in replayed(name, Target("http://captured.invalid")) for payload in _payloads(seen)]
    # Each once: a third of them repeat another exactly (the same event of a case played again, say).
    return list({json.dumps(payload, sort_keys=True): payload for payload in found}.values())


def _verdicts(profile: str | None, path: str, payload: Any) -> tuple[bool, bool]:
    """Whether the fast check and jsonschema find the payload valid."""
    schemas = schema_set(profile)
    fast = schemas.valid(path, copy.deepcopy(payload)) is True
    return fast, next(iter(schemas.validator(path).iter_errors(payload)), None) is None


def _agree(profile: str | None, path: str, payload: Any) -> None:
    fast, slow = _verdicts(profile, path, payload)
    assert fast == slow, f"{profile} {path}: fast says {fast}, jsonschema {slow}: {json.dumps(payload)[:300]}"


def _accepts_nothing_jsonschema_rejects(profile: str | None, path: str, payload: Any) -> None:
    fast, slow = _verdicts(profile, path, payload)
    assert slow or not fast, f"{profile} {path}: the fast check accepts what jsonschema rejects: " \
                             f"{json.dumps(payload)[:300]}"


def test_every_payload_schema_has_a_fast_path_under_every_profile():
    for profile in PROFILE_OVERLAYS:
        assert [path for path in PAYLOADS if schema_set(profile).valid(path, None) is None
                and schema_set(profile)._fast[(path, True)] is None] == [], profile


def test_the_fast_path_leaves_the_payload_as_it_was():
    """fastjsonschema writes `default`s into what it validates unless told not to."""
    payload = {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}}]}
    before = copy.deepcopy(payload)
    schema_set("reference").valid("chat/chunk.json", payload)
    assert payload == before


def test_a_dollar_in_a_set_is_escaped_and_an_anchor_kept():
    assert _dollars_in_sets_escaped(r"^[A-Z_$][\]$]*\$x$") == r"^[A-Z_\x24][\]\x24]*\$x$"


def test_what_only_the_fast_check_rejects_is_decided_by_jsonschema():
    """A final newline after a value a pattern ends with `$`: ECMA 262 rejects it, Python's `re` (jsonschema's)
    does not. The fast check gives no answer, and the findings are jsonschema's: none."""
    schemas = schema_set(None)
    error = {"error": {"message": "m", "type": "invalid_request_error", "param": "model\n", "code": None}}
    assert _verdicts(None, "responses/error.json", error) == (False, True)
    assert schemas.findings("responses/error.json", error) == []


@pytest.mark.parametrize("profile", list(PROFILE_OVERLAYS), ids=str)
def test_the_real_answers_agree(profile, real_payloads):
    under: dict[str, list[Any]] = {}
    for api, kind, payload in real_payloads:
        for path in {schema_for(api, kind, payload), PAYLOAD_SCHEMAS[(api, kind)]}:
            under.setdefault(path, []).append(payload)
    for path, payloads in under.items():
        for payload in budget.spread(payloads):
            _agree(profile, path, payload)


ODD = [None, True, False, 0, 1, -1, 1.0, 1.5, 2**64, "", "x", "$", "a\n", "stop", "tool_calls", "assistant", "function",
       "chat.completion.chunk", "response.completed", [], [1], {}, {"type": "text"}, "\u00e9\U0001f600"]
ODD_VALUES = st.sampled_from(ODD)


def _places(node: Any, where: tuple = ()) -> list[tuple]:
    found = [where]
    if isinstance(node, dict):
        for key, child in node.items():
            found += _places(child, (*where, key))
    elif isinstance(node, list):
        for position, child in enumerate(node):
            found += _places(child, (*where, position))
    return found


def _at(payload: Any, place: tuple) -> Any:
    for step in place:
        payload = payload[step]
    return payload


def _mutated(payload: Any, chance: random.Random) -> Any:
    """One to three changes: a member deleted, set to an odd value, or set to a value from elsewhere in the
    payload (a well-formed member in the wrong place)."""
    payload = copy.deepcopy(payload)
    for _ in range(chance.randint(1, 3)):
        places = [place for place in _places(payload) if place]
        if not places:
            break
        place = chance.choice(places)
        parent, action = _at(payload, place[:-1]), chance.choice(["delete", "set", "copy"])
        if action == "delete":
            del parent[place[-1]]
        else:
            parent[place[-1]] = copy.deepcopy(chance.choice(ODD) if action == "set" else
                                              _at(payload, chance.choice(places)))
    return payload


@settings(max_examples=budget.examples(400), deadline=None, suppress_health_check=list(HealthCheck))
@given(pick=st.integers(min_value=0), seed=st.integers(0, 2**32), profile=st.sampled_from(list(PROFILE_OVERLAYS)))
def test_mutations_of_real_answers_are_never_accepted_by_the_fast_check_alone(real_payloads, pick, seed, profile):
    api, kind, payload = real_payloads[pick % len(real_payloads)]
    changed = _mutated(payload, random.Random(seed))
    for path in {schema_for(api, kind, changed), PAYLOAD_SCHEMAS[(api, kind)]}:
        _accepts_nothing_jsonschema_rejects(profile, path, changed)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
                    | ODD_VALUES,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=budget.examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PAYLOADS), profile=st.sampled_from(list(PROFILE_OVERLAYS)), payload=JSON)
def test_arbitrary_json_is_never_accepted_by_the_fast_check_alone(path, profile, payload):
    """hypothesis-jsonschema's from_schema would draw valid payloads too, but it does not run on the hypothesis
    this suite uses; the real answers above are the valid ones."""
    _accepts_nothing_jsonschema_rejects(profile, path, payload)
