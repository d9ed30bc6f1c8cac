"""The stages of a native chat answer that faults transform, in the order the door makes an answer."""

from lmconform.reference.faults.registry import Stage

REQUEST = Stage("the native chat request body as parsed, before validation")
RESULT = Stage("the native chat result, as it is returned and carried by chat.end")
EVENTS = Stage("the events of a native chat stream in order")
FRAMES = Stage("the events of a native chat stream, each with the name its SSE `event:` line gives it")
