"""Secrets are filtered wherever a request is shown."""

from lmconform.wire.redact import curl_command, redact_headers, redact_text


def test_a_cookie_value_is_filtered_whole():
    assert redact_headers({"Cookie": "session=SECRET; theme=dark"}) == {"Cookie": "[Filtered]"}
    assert redact_headers({"Authorization": "Bearer sk-1"}) == {"Authorization": "Bearer [Filtered]"}
    assert redact_headers({"x-api-key": "sk-1 extra"}) == {"x-api-key": "[Filtered]"}


def test_curl_is_shell_safe_and_text_redaction_catches_echoes():
    curl = curl_command("POST", "http://h/v1/x", {"Authorization": "Bearer [Filtered]"}, {"q": "it's $(rm -rf /)"})
    assert "'\"'\"'" in curl and "$(rm" in curl  # quoted, never expanded
    assert redact_text("key sk-1 echoed", ("sk-1",)) == "key [Filtered] echoed"
