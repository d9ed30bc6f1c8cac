"""Where a server states a model's context length, whatever the server: in a model entry of its models list (vLLM's
`max_model_len`, LM Studio's REST API's `max_context_length`, others' plain `context_length`, llama.cpp's
llama-server's `meta.n_ctx_train`, the context the model was trained on), and in llama-server's `GET /props`
(`default_generation_settings.n_ctx`, the context of one slot: the one a request gets)."""

from __future__ import annotations

CONTEXT_LENGTH_AT = (("max_model_len",), ("max_context_length",), ("context_length",), ("meta", "n_ctx_train"))
PROPS_PATH = "/props"
PROPS_CONTEXT_AT = ("default_generation_settings", "n_ctx")
