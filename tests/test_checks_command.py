"""`lmconform checks [--case ID]`: every check as a line (id, level, title, rule), and for one case exactly the checks a
run would judge it by, nothing sent."""

import pytest

from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.cli import main
from lmconform.run import RunPlan, applies
from lmconform.target import Target


def listed(capsys, *args: str) -> list[str]:
    assert main(["checks", *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_every_check_is_one_line_with_its_level_title_and_rule(capsys):
    lines = listed(capsys)
    assert len(lines) == len(REGISTRY)
    for line, check in zip(lines, sorted(REGISTRY.values(), key=lambda check: check.id), strict=True):
        assert line.split()[:2] == [check.id, check.level]
        assert f"  {check.title}  [{check.ref}]" in line


@pytest.mark.parametrize("case_id", ["chat/void-weather-tool", "responses/fuzz-chains", "vscodelm/plain-turn"])
def test_a_cases_checks_are_those_a_run_judges_it_by(capsys, case_id):
    api = case_id.partition("/")[0]
    (case,) = [case for case in load_cases(api) if case.id == case_id]
    header, *lines = listed(capsys, "--case", case_id)
    shown = {line.split()[0] for line in lines}
    assert header == f"{case_id}: {len(lines)} checks judge this case"
    assert shown == {check.id for check in REGISTRY.values() if applies(check, case)}
    # A run against an endpoint (or a bridge) with no profile and no upstream judges it by the checks that need
    # nothing more.
    plan = RunPlan(Target("http://127.0.0.1:9") if api != "vscodelm" else
                   Target("", bridge_command=("bridge",), bridge_profile="none"))
    always = {line.split()[0] for line in lines if "  (only " not in line}
    assert always == {check.id for judged, check in plan.pairs(api) if judged.id == case_id}


def test_an_unknown_case_is_a_usage_error_naming_the_closest(capsys):
    assert main(["checks", "--case", "chat/void-weather"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("lmconform checks: no case 'chat/void-weather'; did you mean chat/void-weather-tool")
    assert len(error.splitlines()) == 1
