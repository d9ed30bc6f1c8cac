"""The schema checks of LM Studio's native chat (lmconform.checks.schema): the result and every stream event, whose
schemas grade at MUST and SHOULD only."""

from lmconform.apis.native_chat.checks.scope import native_not_streamed, native_streamed
from lmconform.checks.refs import LMSTUDIO_NATIVE_CHAT, LMSTUDIO_NATIVE_STREAMING
from lmconform.checks.schema import BODIES, EVENTS, SchemaObject, register
from lmconform.vocabulary import Level

register(SchemaObject("native_chat.result", "body", BODIES, "a native chat result body", native_not_streamed,
                      LMSTUDIO_NATIVE_CHAT,
                      {Level.MUST: ("native-stats-missing",), Level.SHOULD: ("native-provider-info-missing",)}))
register(SchemaObject("native_chat.event", "event", EVENTS, "every native chat stream event, by its `type`",
                      native_streamed, LMSTUDIO_NATIVE_STREAMING,
                      {Level.MUST: ("native-tool-arguments-string",), Level.SHOULD: ("native-provider-info-missing",)}))
