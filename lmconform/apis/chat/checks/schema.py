"""The schema checks of chat completions (lmconform.checks.schema): the non-stream body and every chunk."""

from lmconform.apis.chat.checks.scope import chat_body, chat_streamed
from lmconform.checks.refs import OPENAI_CHAT_CREATE, OPENAI_CHAT_STREAMING
from lmconform.checks.schema import BODIES, SchemaObject, register

register(SchemaObject("chat.completion", "body", BODIES, "a `chat.completion` body", chat_body, OPENAI_CHAT_CREATE))
register(SchemaObject("chat.chunk", "event", ("chunk", "chunks"), "every `chat.completion.chunk` (and in-stream error)",
                      chat_streamed, OPENAI_CHAT_STREAMING))
