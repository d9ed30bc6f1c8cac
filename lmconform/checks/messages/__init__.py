"""The `messages.*` checks: Anthropic's Messages API (`/v1/messages`), the door Claude Code and the anthropic SDKs
come in by. Importing this package registers them."""

from lmconform.checks.messages import message, requests, stream  # noqa: F401  (registration)
