"""`POST /v1/echo` sends its text back."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.cases import Case
from lmconform.checks.observed import Observed
from lmconform.checks.refs import ECHO_ANSWER
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, shown


def echoed(case: Case) -> bool:
    return case.path == "/v1/echo"


@check("echo.body.text_echoed", level=Level.MUST, applies=echoed, ref=ECHO_ANSWER,
       title="the answer holds the text the request sent", proven_by=("echo-text-dropped",))
def text_echoed(observed: Observed) -> Iterator[Failure]:
    observed.require_success()
    sent = observed.request_body.get("text")
    body = observed.exchange.json
    if not isinstance(body, dict) or body.get("text") != sent:
        yield Failure(f"text {shown(sent)}", shown(body.get("text") if isinstance(body, dict) else body),
                      observed.exchange.body_excerpt())
