"""The stages of a text completion that faults transform, in the order the door makes an answer."""

from lmconform.reference.faults.registry import Stage

REQUEST = Stage("the completions request body as parsed and validated")
TEXT = Stage("the completion's text and finish reason, as the model wrote them")
OBJECT = Stage("each chunk of a stream, or the non-stream body, as the server renders it; also given whether streamed")
CHUNKS = Stage("the chunks of a stream before [DONE], as they are sent")
