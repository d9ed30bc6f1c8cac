"""Chat completions: `POST /v1/chat/completions`, OpenAI's chat API as LM Studio and every compatible server offer it,
streamed as `chat.completion.chunk` events or answered with one `chat.completion`."""

from lmconform.api_entry import HTTP, Api

API = Api("chat", "Chat completions", HTTP, "POST", "/v1/chat/completions", output_cap="max_tokens",
          enumerations=frozenset({"object", "role", "finish_reason", "type"}),
          format_at=("response_format",), format_schema_at=("json_schema", "schema"), ends_with_done=True, reasoning_channel=True,
          tool_name_at=("function", "name"), tool_schema_at=("function", "parameters"),
          tool_strict_at=("function", "strict"),
          clients={"client.void": "Void", "client.openai_python": "openai SDK for Python"},
          topics={"Tool calls": ("chat.stream.tool_call.", "chat.tool_choice.", "chat.finish_reason.tool_calls",
                                 "chat.message.tool_call", "chat.parallel_tool_calls.")},
          schemas={"request": "request.json", "body": "completion.json", "event": "stream-payload.json",
                   "error": "error.json"},
          noun="chat completion", lmstudio_errors="string", shows_http_faults=True, logprobs_asked=("logprobs", True))
