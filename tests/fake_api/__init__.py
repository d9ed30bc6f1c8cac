"""A made-up API, `POST /v1/echo`, that tests/test_apis.py adds to a copy of lmconform in a folder of its own and one
line of the table, to show that nothing else needs an edit."""

from lmconform.api_entry import HTTP, Api

API = Api("echo", "Echo", HTTP, "POST", "/v1/echo",
          schemas={"request": "request.json", "body": "echo.json", "error": "../common/error.json"})
