"""`/v1/models`: every case in fixtures/cases/models x every check that applies to it."""

import pytest


@pytest.mark.lmconform_cases("models")
def test_models(case, check, judge):
    judge(case, check)
