"""`/v1/responses`: every case in fixtures/cases/responses x every check that applies to it."""

import pytest


@pytest.mark.lmconform_cases("responses")
def test_responses(case, check, judge):
    judge(case, check)
