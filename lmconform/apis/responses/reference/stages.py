"""The stages of a Responses answer that faults transform, in the order the door makes an answer."""

from lmconform.reference.faults.registry import Stage

REQUEST = Stage("the Responses request body as parsed, before validation")
ERROR = Stage("the error object of a refused Responses request")
REFUSAL = Stage("the error response to a Responses request that was refused")
OBJECT = Stage("the response object, as it is returned, stored and streamed")
STORED = Stage("the response object as the store keeps it and GET /v1/responses/{id} gives it back")
BODY = Stage("the response object as the non-stream body sends it (not as it is stored or streamed)")
EVENTS = Stage("the events of a stream in order, before they are numbered")
FRAMES = Stage("the numbered events, each with the name its SSE `event:` line gives it")
SSE = Stage("the bytes of each event of a stream, in order", in_answer=False)
