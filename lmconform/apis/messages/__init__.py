"""Anthropic's Messages API: `POST /v1/messages` (LM Studio ≥ 0.4.1, llama-server, LiteLLM's Anthropic door). It keeps
no conversation: a turn that answers a tool call sends the conversation again with the call and its result."""

from lmconform.apis.entry import HTTP, Api

API = Api("messages", "Anthropic Messages", HTTP, "POST", "/v1/messages", output_cap="max_tokens",
          enumerations=frozenset({"role", "stop_reason", "type"}),
          schemas={"request": "request.json", "body": "message.json", "event": "events/event.json",
                   "error": "error.json"})
