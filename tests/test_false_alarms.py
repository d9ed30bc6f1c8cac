"""Answers that are right must not be reported as defects: a false alarm costs as much trust as a missed one."""

import json

from lmconform.cases import load_cases
from lmconform.checks import REGISTRY
from lmconform.checks.evaluate import evaluate
from lmconform.checks.observed import Observed
from lmconform.target import Target
from lmconform.vocabulary import Outcome
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest


def verdict(check_id: str, api: str, slug: str, content_type: str, body: bytes):
    case = next(case for case in load_cases(api) if case.slug == slug)
    exchange = HttpExchange(HttpRequest("POST", f"http://x{case.path}", {}, case.body), status=200,
                        headers={"content-type": content_type}, chunks=[BodyChunk(0.0, body)])
    return evaluate(REGISTRY[check_id], Observed(case, Target(base_url="http://x"), exchange))


def test_an_answer_cut_at_max_tokens_is_no_defect_of_the_stream():
    # The openai SDK's stream helper raises LengthFinishReasonError by design when finish_reason is "length".
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}]},
              {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}]
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"
    found = verdict("client.openai_python.stream_helper", "chat", "text-stream", "text/event-stream", body)
    assert found.outcome is Outcome.OK and "max_tokens" in found.notes[0]


def test_a_responses_object_with_error_null_is_an_answer():
    response = {"id": "resp_1", "object": "response", "status": "completed", "error": None, "output": []}
    found = verdict("http.status.success_for_valid_request", "responses", "calculate-tool-flattened",
                    "application/json", json.dumps(response).encode())
    assert found.outcome is Outcome.OK
