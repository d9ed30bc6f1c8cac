"""The checks of Anthropic's Messages API (`/v1/messages`), the door Claude Code and the anthropic SDKs come in by:
the `messages.*` checks, the anthropic SDK's verdicts and the schema checks of its objects. Importing this package
registers them."""

from lmconform.apis.messages.checks import (  # noqa: F401  (registration)
    clients,
    fields,
    message,
    requests,
    routes,
    schema,
    stream,
)
