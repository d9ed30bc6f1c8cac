"""`--profile lmstudio[@VERSION]`: LM Studio's documented behaviour by version passes (UNSUPPORTED, not FAILED),
what it documents but does not do still fails, and a profile a user mistypes is a usage error."""

import pytest

from lmconform.profiles import Profile, parse_profile, version_of
from lmconform.run import run_suite
from lmconform.settings import RunSettings
from lmconform.target import Target
from lmconform.vocabulary import Outcome, Requirement


@pytest.mark.parametrize(("text", "version"), [("0.3.17", (0, 3, 17)), ("0.4.20+1", (0, 4, 20)),
                                               ("0.3.21 beta 3", (0, 3, 21)), ("0.3.9b3", (0, 3, 9))])
def test_versions_as_lmstudio_writes_them(text, version):
    assert version_of(text) == version


@pytest.mark.parametrize("text", ["lmstudo", "lmstudio@latest", "reference@1.0", "ollama"])
def test_a_mistyped_profile_is_refused_with_a_sentence(text):
    with pytest.raises(ValueError, match="--profile"):
        parse_profile(text)


def test_no_profile_is_the_openai_spec_only():
    assert parse_profile(None) == Profile() and parse_profile(None).requirements == frozenset()
    assert parse_profile(None).lacks("tool_choice_required") is None and parse_profile(None).error_shape("chat") is None


def test_a_version_lacks_what_its_changelog_adds_later():
    old, new, latest = parse_profile("lmstudio@0.3.14"), parse_profile("lmstudio@0.3.15"), parse_profile("lmstudio")
    assert "0.3.15" in old.lacks("tool_choice_required") and new.lacks("tool_choice_required") is None
    assert latest.lacks("tool_choice_required") is None and latest.lacks("responses") is None
    assert parse_profile("lmstudio@0.3.28").lacks("responses") and parse_profile("lmstudio@0.3.17").lacks("stream_usage")
    assert str(parse_profile("lmstudio@0.3.17")) == "lmstudio@0.3.17" and str(latest) == "lmstudio"


def test_a_feature_of_one_engine_is_lacking_on_another():
    latest = parse_profile("lmstudio")
    assert "MLX" in latest.lacks("tool_choice_required", engine="MLX")
    assert latest.lacks("tool_choice_required", engine="llama.cpp-linux-x86_64-avx2") is None


def test_each_endpoint_has_its_documented_error_shape():
    latest = parse_profile("lmstudio")
    assert latest.error_shape("chat") == "string" and latest.error_shape("responses") == "object"
    assert parse_profile("reference").requirements >= {Requirement.LMSTUDIO_PROFILE, Requirement.REFERENCE_PROFILE}


def outcomes(server, fault: str, profile: str | None, check: str) -> set[Outcome]:
    target = Target(base_url=f"{server.base_url}/faults/{fault}", read_timeout=5, profile=profile)
    run = run_suite(target, include=[check], settings=RunSettings(fuzz_examples=0))
    return {verdict.outcome for verdict in run.verdicts if verdict.check.id == check}


def test_json_mode_refused_is_unsupported_for_lmstudio_and_a_finding_otherwise(server):
    check = "chat.response_format.json_object_accepted"
    assert Outcome.NON_STRICT in outcomes(server, "json-object-rejected", None, check)
    assert outcomes(server, "json-object-rejected", "lmstudio", check) == {Outcome.UNSUPPORTED}


def test_required_tool_choice_ignored_is_unsupported_only_before_it_was_documented(server):
    check = "chat.tool_choice.required_calls_a_tool"
    assert outcomes(server, "tool-choice-ignored", "lmstudio@0.3.14", check) == {Outcome.UNSUPPORTED}
    assert Outcome.FAILED in outcomes(server, "tool-choice-ignored", "lmstudio@0.3.15", check)
    assert Outcome.FAILED in outcomes(server, "tool-choice-ignored", "lmstudio", check)


def test_a_bare_string_error_is_documented_for_chat_but_not_for_responses(server):
    check = "errors.body.openai_error_object"
    assert outcomes(server, "responses-error-string", "lmstudio", check) >= {Outcome.NON_STRICT}
    assert Outcome.NON_STRICT not in outcomes(server, "unknown-route-200", "lmstudio", check)
