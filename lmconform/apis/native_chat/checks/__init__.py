"""The checks of LM Studio's native chat. Importing this package registers them."""

from lmconform.apis.native_chat.checks import answers, schema  # noqa: F401  (registration)
