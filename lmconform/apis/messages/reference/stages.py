"""The stages of an Anthropic Messages answer that faults transform, in the order the door makes an answer."""

from lmconform.reference.faults.registry import Stage

REQUEST = Stage("the Messages request body as parsed, before validation")
REFUSAL = Stage("the error response to a Messages request the server refuses")
OBJECT = Stage("the message object, as it is returned and streamed")
BODY = Stage("the message object as the non-stream answer returns it")
EVENTS = Stage("the events of a Messages stream in order")
FRAMES = Stage("the events of a Messages stream, each with the name its SSE `event:` line gives it (or None)")
COUNT = Stage("the `input_tokens` of a count_tokens answer, given the conversation's messages as the model reads them")
