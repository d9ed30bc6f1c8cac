"""The stages of the model list that faults transform."""

from lmconform.reference.faults.registry import Stage

LIST = Stage("the model entries GET /v1/models lists")
REPLY = Stage("the response to GET /v1/models")
