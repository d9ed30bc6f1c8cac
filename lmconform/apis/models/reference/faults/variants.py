"""The variant of `GET /v1/models`: model entries as real servers list them, a valid form no check may report above
INFO."""

from __future__ import annotations

import json

from starlette.responses import JSONResponse, Response

from lmconform.apis.models.reference import stages
from lmconform.reference.faults.registry import variant


@variant("models-extra-keys", stages.REPLY, api="models",
         summary="model entries carry extra keys (`aliases`, `tags`, `status`), and an embedding model is listed "
                 "second",
         seen_in="llama.cpp's llama-server (test_basic.py); LM Studio lists embedding models (#763)")
def models_extra_keys(reply: Response) -> Response:
    body = json.loads(reply.body)
    first = {**body["data"][0], "aliases": [], "tags": [], "status": {"value": "loaded"}}
    embedding = {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"}
    return JSONResponse({**body, "data": [first, embedding]})


def _context_length_as(reply: Response, stated: dict) -> Response:
    body = json.loads(reply.body)
    entries = [{**{key: value for key, value in entry.items() if key != "max_context_length"}, **stated}
               for entry in body["data"]]
    return JSONResponse({**body, "data": entries})


@variant("models-context-length-vllm", stages.REPLY, api="models",
         summary="the context length as vLLM lists it: `max_model_len`", seen_in="vLLM's /v1/models")
def models_context_length_vllm(reply: Response) -> Response:
    return _context_length_as(reply, {"max_model_len": 4096})


@variant("models-context-length-llama-cpp", stages.REPLY, api="models",
         summary="the context length as llama.cpp lists it: `meta.n_ctx_train`, the context the model was trained on",
         seen_in="llama.cpp's llama-server /v1/models")
def models_context_length_llama_cpp(reply: Response) -> Response:
    return _context_length_as(reply, {"meta": {"vocab_type": 2, "n_ctx_train": 4096}})
