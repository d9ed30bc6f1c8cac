"""The check registry: ids, levels, selection, and the shape of a verdict message."""

import pytest

from lmconform.checks import REGISTRY, select
from lmconform.checks.registry import ID_PATTERN, check, unmatched_patterns
from lmconform.vocabulary import Level

SURFACES = {"http", "sse", "chat", "responses", "messages", "native_chat", "models", "errors", "generation", "client",
            "proxy", "vscodelm"}


def test_every_check_has_id_level_title_and_reference():
    assert len(REGISTRY) >= 30
    for check_id, registered in REGISTRY.items():
        assert ID_PATTERN.match(check_id)
        assert check_id.split(".")[0] in SURFACES
        assert registered.level in Level
        assert registered.title and "\n" not in registered.title
        assert registered.ref.startswith(("https://", "README.md"))


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
