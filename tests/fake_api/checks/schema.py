"""The schema check of the made-up echo API's answer (lmconform.checks.schema)."""

from lmconform.apis.echo.checks.echo import echoed
from lmconform.checks.schema import BODIES, SchemaObject, register
from lmconform.vocabulary import Level

register(SchemaObject("echo.answer", "body", BODIES, "the echo's answer", echoed, "tests/fake_api/schemas/echo.json",
                      {Level.MUST: ("echo-object-missing",)}))
