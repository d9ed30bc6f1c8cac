"""The stages of a chat completion that faults transform, in the order the door makes an answer."""

from lmconform.reference.faults.registry import Stage

REQUEST = Stage("the chat request body as parsed, before validation")
REFUSAL = Stage("the 400 response to an invalid chat request")
UNSUPPORTED = Stage("the 400 message for an option of a valid chat request the server does not take (None: it takes "
                    "them all), given the request body")
PLAN = Stage("the model's Plan, before its tokens are counted")
STOP = Stage("the plan cut at the request's first stop string, with that string (None when none was hit); also "
             "given whether the answer is streamed")
TOOL_CALLS = Stage("the message's tool_calls entries, which the stream cuts into deltas")
LOGPROBS = Stage("the log probabilities of the answer's text, one entry a streamed piece, when the request asks")
TOOL_CALL_DELTAS = Stage("the streamed tool_calls entries of each call, its opening delta first")
BODY = Stage("the non-stream chat.completion body, as returned")
OBJECT = Stage("each chunk of a stream, or the non-stream body, as the server renders it")
STREAM = Stage("what the data lines of a stream carry: chunk objects, then the string [DONE]")
SSE = Stage("the bytes of a stream as they are sent, an event at a time; also given the server's stopping Event",
            in_answer=False)
