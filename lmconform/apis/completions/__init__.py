"""Legacy text completions: `POST /v1/completions`, a prompt (and, for fill-in-the-middle, a `suffix`) continued as
text, streamed as `text_completion` chunks whose choices carry `text`, then `data: [DONE]`. Editors' code
completion (fill-in-the-middle) still uses it against LM Studio and llama.cpp's llama-server. Servers that speak only
the chat API leave it out: like the Responses and Messages APIs, a target without its route gets UNSUPPORTED for its
cases, not FAILED."""

from lmconform.api_entry import HTTP, Api

API = Api("completions", "Text completions", HTTP, "POST", "/v1/completions", output_cap="max_tokens",
          enumerations=frozenset({"object", "finish_reason"}), ends_with_done=True, noun="text completion",
          optional=True,
          schemas={"request": "request.json", "body": "completion.json", "event": "stream-payload.json",
                   "error": "../common/error.json"})
