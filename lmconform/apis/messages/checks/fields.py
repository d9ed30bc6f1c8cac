"""The matrix of the fields Claude Code sends: for each, on an otherwise plain request, what the server does with it —
honoured (accepted, and its effect shows where it has one), refused (a 4xx, which the verdict of
http.status.success_for_valid_request judges with its known cause) or ignored (accepted, and its effect does not
show)."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.messages.checks.scope import messages_grading_field
from lmconform.apis.messages.checks.views import final_message
from lmconform.checks.observed import Observed
from lmconform.checks.parameters import Effect, graded_by_effect
from lmconform.checks.refs import CLAUDE_CODE_FIELDS
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Grade, Level

MATRIX = "request_field"  # the results record's key for this matrix


def _thinking_shown(observed: Observed) -> str | None:
    """Adaptive thinking's effect: a thinking block (None: there is none)."""
    content = final_message(observed).get("content")
    blocks = [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    thought = next((block for block in blocks if block.get("type") in ("thinking", "redacted_thinking")), None)
    return None if thought is None else f"a {thought['type']} block comes first"


# The fields whose effect an answer shows, and how to see it; the others (metadata, a beta flag, cache_control, a
# system turn, an image in a tool result, a thinking block sent back) are honoured when they are accepted.
EFFECTS: dict[str, Effect] = {
    "thinking: adaptive": ("a thinking block", _thinking_shown),
}


@check("messages.request_field.grade", level=Level.INFO, applies=messages_grading_field, ref=CLAUDE_CODE_FIELDS,
       title="what the server does with one field Claude Code sends: honoured (accepted, and its effect shows where it "
             "has one), refused (a 4xx) or ignored (accepted, and its effect does not show)",
       proven_by=("messages-adaptive-thinking-ignored",))
def field_grade(observed: Observed) -> Iterator[Failure | Grade]:
    # INFO: the matrix; a refusal is http.status.success_for_valid_request's finding (with its known cause and way
    # round), an ignored field is reported here beside its grade.
    field = observed.case.request_field or ""
    yield from graded_by_effect(observed, field, EFFECTS.get(field), MATRIX)
