"""The schema checks of Anthropic's Messages API (lmconform.checks.schema): the message and every stream event."""

from lmconform.apis.messages.checks.scope import messages_not_streamed, messages_streamed
from lmconform.checks.refs import ANTHROPIC_MESSAGES, ANTHROPIC_STREAMING
from lmconform.checks.schema import BODIES, EVENTS, SchemaObject, register
from lmconform.vocabulary import Level

register(SchemaObject("messages.message", "body", BODIES, "an Anthropic `message` body", messages_not_streamed,
                      ANTHROPIC_MESSAGES,
                      {Level.MUST: ("messages-tool-use-incomplete",),
                       Level.SHOULD: ("messages-type-missing",),
                       Level.INFO: ("messages-stop-sequence-omitted",)}))
register(SchemaObject("messages.event", "event", EVENTS, "every Messages stream event, by its `type`",
                      messages_streamed, ANTHROPIC_STREAMING,
                      {Level.MUST: ("messages-tool-use-incomplete",),
                       Level.SHOULD: ("messages-tool-start-without-input",),
                       Level.INFO: ("messages-stop-sequence-omitted",)}))
