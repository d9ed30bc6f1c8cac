"""The schema checks of the model list (lmconform.checks.schema), whose schema grades at MUST and SHOULD only."""

from lmconform.apis.models.checks.scope import models_list
from lmconform.checks.refs import OPENAI_MODELS
from lmconform.checks.schema import BODIES, SchemaObject, register
from lmconform.vocabulary import Level

register(SchemaObject("models.list", "body", BODIES, "the `/v1/models` list", models_list, OPENAI_MODELS,
                      {Level.MUST: ("model-object-missing",), Level.SHOULD: ("model-owned-by-missing",)}))
