"""The check registry: ids, levels, selection, and the shape of a verdict message."""

import pytest

from lmconform.checks import REGISTRY, select
from lmconform.checks.registry import ID_PATTERN, check, unmatched_patterns
from lmconform.surfaces import SURFACE_NAMES
from lmconform.vocabulary import Level, Requirement, surface_of


def test_every_check_has_id_level_title_and_reference():
    for check_id, registered in REGISTRY.items():
        assert ID_PATTERN.match(check_id)
        assert registered.surface in SURFACE_NAMES, f"{check_id}: its surface has no name reports can show"
        assert registered.level in Level
        assert registered.title and "\n" not in registered.title
        assert registered.ref.startswith(("https://", "README.md"))


def test_what_a_check_is_and_needs_are_attributes_that_agree_with_its_id():
    for check_id, registered in REGISTRY.items():
        assert registered.surface == surface_of(check_id)
        assert (registered.kind == "client") == check_id.startswith("client."), check_id
        assert (registered.kind == "agent") == check_id.startswith("agent."), check_id
        assert (registered.kind == "differential") == (Requirement.UPSTREAM in registered.requires), check_id


def test_a_check_is_selected_only_where_the_run_meets_what_it_requires():
    plain = {c.id for c in select()}
    as_reference = {c.id for c in select(available=[Requirement.LMSTUDIO_PROFILE, Requirement.REFERENCE_PROFILE])}
    with_upstream = {c.id for c in select(available=[Requirement.UPSTREAM])}
    assert "responses.tools.nested_error_is_lmstudio_zod" in as_reference - plain
    assert "responses.chain.recall_answered" in as_reference - plain
    assert {c for c in with_upstream - plain} == {c.id for c in REGISTRY.values() if c.kind == "differential"}


def test_a_duplicate_id_is_refused():
    existing = next(iter(REGISTRY))
    with pytest.raises(ValueError, match="twice"):
        check(existing, level=Level.MUST, title="x", ref="x", applies=lambda case: True)(lambda observed: [])


def test_an_id_not_in_the_naming_scheme_is_refused():
    with pytest.raises(ValueError, match="surface"):
        check("NoDots", level=Level.MUST, title="x", ref="x", applies=lambda case: True)


def test_selection_by_glob():
    chosen = {c.id for c in select(["chat.stream.tool_call.*"], ["*.id_once"])}
    assert "chat.stream.tool_call.index_zero" in chosen
    assert "chat.stream.tool_call.id_once" not in chosen
    assert all(c.startswith("chat.stream.tool_call.") for c in chosen)
    assert list(unmatched_patterns(["chat.*", "nothing.matches.this"])) == ["nothing.matches.this"]
