"""The model list: `GET /v1/models`, the models a server offers, in OpenAI's shape."""

from lmconform.apis.entry import HTTP, Api

API = Api("models", "Model list", HTTP, "GET", "/v1/models")
