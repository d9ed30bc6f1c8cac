"""`/v1/responses` checks, by what they judge: tools, the response object, conversations kept by the server, what it
stores of a response, the event stream, the tool-type matrix, the WebSocket mode, what the openai SDK makes of it, what a proxy changes of it, and the schemas
of its objects. Importing this package registers them."""

from lmconform.apis.responses.checks import (  # noqa: F401  (registration)
    body,
    chain,
    clients,
    compaction,
    proxy,
    schema,
    store,
    stream,
    tool_types,
    tools,
    websocket,
)
