"""Anthropic's Messages API: `POST /v1/messages` (LM Studio ≥ 0.4.1, llama-server, LiteLLM's Anthropic door). It keeps
no conversation: a turn that answers a tool call sends the conversation again with the call and its result."""

from lmconform.api_entry import HTTP, Api

API = Api("messages", "Anthropic Messages", HTTP, "POST", "/v1/messages", output_cap="max_tokens",
          enumerations=frozenset({"role", "stop_reason", "type"}),
          clients={"client.anthropic_python": "anthropic SDK for Python"},
          topics={"Tool calls": ("messages.tool_use.", "messages.stream.tool_use", "messages.tool_choice.",
                                 "messages.tool_result.", "messages.stop_reason.tool_use")},
          schemas={"request": "request.json", "body": "message.json", "event": "events/event.json",
                   "error": "error.json"},
          tool_schema_at=("input_schema",), tool_schemas_bind=True, optional=True, noun="message", reasoning_channel=True,
          lmstudio_since=((0, 4, 1), "the Anthropic-compatible POST /v1/messages arrived in 0.4.1"))
