"""The `vscodelm.*` checks: a VS Code language-model bridge judged on everything it said on stdout to one case's
messages. Framing (one JSON-RPC 2.0 message per line, ids it was sent), turns (parts, one complete, then the
result; ids echoed with their type; only the protocol's parts; a tool call last and never repeated), the session
(history committed or discarded as the client's next request says, cancellation), errors and the two small
requests (model information, token count)."""

from lmconform.apis.vscodelm.checks import errors, framing, session, turns  # noqa: F401  (registration)
