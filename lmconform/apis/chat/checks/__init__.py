"""The checks of chat completions: chunks, tool-call deltas, finish reasons and tool_choice (answers.py), each chunk
(stream.py), the message as a whole (message.py), its stop strings (stop.py), what Void and the openai SDK make of a stream (clients.py) and the
schemas of its objects (schema.py). Importing this package registers them."""

from lmconform.apis.chat.checks import answers, clients, message, schema, stop, stream  # noqa: F401  (registration)
