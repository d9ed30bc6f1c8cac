"""The made-up echo API's checks. Importing this package registers them."""

from lmconform.apis.echo.checks import echo, schema  # noqa: F401  (registration)
