"""The Responses API: `POST /v1/responses` (LM Studio ≥ 0.3.29), with conversations the server keeps and continues
by `previous_response_id`, streamed as typed events or answered with one Response object."""

from lmconform.api_entry import HTTP, Api

API = Api("responses", "Responses", HTTP, "POST", "/v1/responses", output_cap="max_output_tokens",
          enumerations=frozenset({"object", "role", "status", "type"}),
          format_at=("text", "format"), reasoning_channel=True, format_schema_at=("schema",), tool_schema_at=("parameters",),
          tool_strict_at=("strict",),
          clients={"client.openai_python": "openai SDK for Python"},
          topics={"Tool calls": ("responses.tools.", "responses.function_call.", "responses.tool_choice."),
                  "Chaining": ("responses.chain.",)},
          schemas={"request": "request.json", "body": "response.json", "event": "events/event.json",
                   "error": "error.json"},
          optional=True, stored_path="/v1/responses/{response_id}", recorded_chain="previous_response_id",
          logprobs_asked=("include", "message.output_text.logprobs"),
           lmstudio_since=((0, 3, 29), "POST /v1/responses arrived in 0.3.29"),
          lmstudio_errors="object")
