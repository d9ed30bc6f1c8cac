"""The schema checks of the Responses API (lmconform.checks.schema): the response object and every stream event."""

from lmconform.apis.responses.checks.scope import responses_body, responses_streamed
from lmconform.checks.refs import OPENAI_RESPONSES_CREATE, OPENAI_RESPONSES_STREAMING
from lmconform.checks.schema import BODIES, EVENTS, SchemaObject, register
from lmconform.vocabulary import Level

register(SchemaObject("responses.response", "body", BODIES, "a Response object body", responses_body,
                      OPENAI_RESPONSES_CREATE,
                      {Level.MUST: ("call-id-missing",),
                       Level.SHOULD: ("usage-details-missing",),
                       Level.INFO: ("response-null-members-omitted",)}))
register(SchemaObject("responses.event", "event", EVENTS, "every Responses stream event, by its `type`",
                      responses_streamed, OPENAI_RESPONSES_STREAMING,
                      {Level.MUST: ("call-id-missing",),
                       Level.SHOULD: ("sequence-number-missing",),
                       Level.INFO: ("delta-logprobs-missing",)}))
