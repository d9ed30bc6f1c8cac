"""LM Studio's own chat API: `POST /api/v1/chat` (LM Studio ≥ 0.4.0), with chats the server stores and continues by
`previous_response_id`, streamed as named events (`chat.start` … `chat.end`) or answered with one result."""

from lmconform.api_entry import HTTP, Api

API = Api("native_chat", "LM Studio native chat", HTTP, "POST", "/api/v1/chat", output_cap="max_output_tokens",
          enumerations=frozenset({"type"}),
          topics={"Tool calls": ("native_chat.stream.tool_call",), "Chaining": ("native_chat.chain.",)},
          schemas={"request": "request.json", "body": "result.json", "event": "events/event.json",
                   "error": "error.json"},
          optional=True, noun="native chat", reasoning_channel=True)
