"""`/v1/responses` checks, by what they judge: tools, the response object, conversations kept by the server, and
the event stream."""

from lmconform.checks.responses import body, chain, stream, tools  # noqa: F401  (registration)
