"""The Responses API: `POST /v1/responses` (LM Studio ≥ 0.3.29), with conversations the server keeps and continues
by `previous_response_id`, streamed as typed events or answered with one Response object."""

from lmconform.apis.entry import HTTP, Api

API = Api("responses", "Responses", HTTP, "POST", "/v1/responses", output_cap="max_output_tokens",
          enumerations=frozenset({"object", "role", "status", "type"}),
          format_at=("text", "format"),
          schemas={"request": "request.json", "body": "response.json", "event": "events/event.json",
                   "error": "error.json"})
