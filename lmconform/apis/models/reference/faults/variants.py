"""The variant of `GET /v1/models`: model entries as real servers list them, a valid form no check may report above
INFO."""

from __future__ import annotations

import json

from starlette.responses import JSONResponse, Response

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import variant
from lmconform.reference.model import CONTEXT_WORDS


@variant("models-extra-keys", stages.REPLY, api="models",
         summary="model entries carry extra keys (`aliases`, `tags`, `status`), and an embedding model is listed "
                 "second",
         seen_in="llama.cpp's llama-server (test_basic.py); LM Studio lists embedding models (#763)")
def models_extra_keys(reply: Response) -> Response:
    body = json.loads(bytes(reply.body))
    first = {**body["data"][0], "aliases": [], "tags": [], "status": {"value": "loaded"}}
    embedding = {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"}
    return JSONResponse({**body, "data": [first, embedding]})


def _context_length_as(reply: Response, stated: dict) -> Response:
    body = json.loads(bytes(reply.body))
    entries = [{**{key: value for key, value in entry.items() if key != "max_context_length"}, **stated}
               for entry in body["data"]]
    return JSONResponse({**body, "data": entries})


@variant("models-context-length-vllm", stages.REPLY, api="models",
         summary="the context length as vLLM lists it: `max_model_len`", seen_in="vLLM's /v1/models")
def models_context_length_vllm(reply: Response) -> Response:
    return _context_length_as(reply, {"max_model_len": CONTEXT_WORDS})


# llama-server's way: the list states the context the model was trained on, far more than the one it is loaded with,
# which `GET /props` states (the door answers it only under this variant).
LLAMA_CPP_CONTEXT = "models-context-length-llama-cpp"
TRAINED_CONTEXT = 32768


@variant(LLAMA_CPP_CONTEXT, stages.REPLY, api="models",
         summary="the context length as llama.cpp states it: `meta.n_ctx_train` in the list, the context the model "
                 "was trained on, and the loaded one as `default_generation_settings.n_ctx` of `GET /props`",
         seen_in="llama.cpp's llama-server /v1/models and /props (test_basic.py::test_server_props)")
def models_context_length_llama_cpp(reply: Response) -> Response:
    return _context_length_as(reply, {"meta": {"vocab_type": 2, "n_ctx_train": TRAINED_CONTEXT}})
