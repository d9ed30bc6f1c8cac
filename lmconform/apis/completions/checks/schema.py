"""The schema checks of text completions (lmconform.checks.schema): the non-stream body and every chunk."""

from lmconform.apis.completions.checks.scope import completions_body, completions_streamed
from lmconform.checks.refs import OPENAI_COMPLETIONS_CREATE, OPENAI_COMPLETIONS_OBJECT
from lmconform.checks.schema import BODIES, SchemaObject, register
from lmconform.vocabulary import Level

PROOFS: dict[Level, tuple[str, ...]] = {Level.MUST: ("completions-index-missing",),
                                        Level.SHOULD: ("completions-id-missing",),
                                        Level.INFO: ("completions-logprobs-omitted",)}

register(SchemaObject("completions.completion", "body", BODIES, "a `text_completion` body", completions_body,
                      OPENAI_COMPLETIONS_OBJECT, PROOFS))
register(SchemaObject("completions.chunk", "event", ("chunk", "chunks"),
                      "every chunk of a text completion stream (and in-stream error)", completions_streamed,
                      OPENAI_COMPLETIONS_CREATE, PROOFS))
