"""`/v1/responses` checks, by what they judge: tools, conversations kept by the server, and the event stream."""

from lmconform.checks.responses import chain, stream, tools  # noqa: F401  (registration)
