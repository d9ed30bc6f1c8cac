"""The model list: `GET /v1/models`, the models a server offers, in OpenAI's shape."""

from lmconform.api_entry import HTTP, Api

# Its error body is OpenAI's, shared by OpenAI's APIs (a path among schema ids, as a `$ref` would give it).
API = Api("models", "Model list", HTTP, "GET", "/v1/models",
          schemas={"body": "list.json", "error": "../common/error.json"},
          lmstudio_errors="string", shows_http_faults=True)
