"""The checks of the model list. Importing this package registers them."""

from lmconform.apis.models.checks import models, schema  # noqa: F401  (registration)
