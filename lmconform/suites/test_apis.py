"""Every API of lmconform's table (lmconform.api_table): its cases x every check that applies to each, one test
function per API (`test_chat[void-weather-tool:chat.stream.tool_call.index_zero]`)."""

import pytest

from lmconform.api_table import APIS


def _suite_of(api: str):
    @pytest.mark.lmconform_cases(api)
    def test(case, check, judge):
        judge(case, check)

    test.__name__ = test.__qualname__ = f"test_{api}"
    test.__doc__ = f"{APIS[api].title}: every case in the {api} cases x every check that applies to it."
    return test


for _api in APIS:
    globals()[f"test_{_api}"] = _suite_of(_api)
