"""The checks of legacy text completions: the object, the text of each choice and what the request's options ask of
it (answers.py), and the schemas of its objects (schema.py). Importing this package registers them."""

from lmconform.apis.completions.checks import answers, schema  # noqa: F401  (registration)
