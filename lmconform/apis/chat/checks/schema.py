"""The schema checks of chat completions (lmconform.checks.schema): the non-stream body and every chunk."""

from lmconform.apis.chat.checks.scope import chat_body, chat_streamed
from lmconform.checks.refs import OPENAI_CHAT_CREATE, OPENAI_CHAT_STREAMING
from lmconform.checks.schema import BODIES, SchemaObject, register
from lmconform.vocabulary import Level

register(SchemaObject("chat.completion", "body", BODIES, "a `chat.completion` body", chat_body, OPENAI_CHAT_CREATE,
                      {Level.MUST: ("tool-id-missing",),
                       Level.SHOULD: ("finish-reason-missing",),
                       Level.INFO: ("chat-null-members-omitted",)}))
register(SchemaObject("chat.chunk", "event", ("chunk", "chunks"), "every `chat.completion.chunk` (and in-stream error)",
                      chat_streamed, OPENAI_CHAT_STREAMING,
                      {Level.MUST: ("chunk-delta-missing",),
                       Level.SHOULD: ("chunk-created-missing",),
                       Level.INFO: ("chat-null-members-omitted",)}))
