"""Chat completions: every case in fixtures/cases/chat x every check that applies to it."""

import pytest


@pytest.mark.lmconform_cases("chat")
def test_chat(case, check, judge):
    judge(case, check)
