"""The faults of the server as a whole rather than of one API's door: what it answers to a route it does not serve
(lmconform.reference.wire.unknown_route), and to a prompt longer than the context on any door."""

from starlette.responses import JSONResponse, PlainTextResponse, Response

from lmconform.reference.faults.registry import Stage, fault, flag

UNKNOWN_ROUTE_200 = flag(
    "unknown-route-200", api="http",
    summary="a route the server does not serve (a typo, a missing /v1, an unknown method) is answered HTTP 200 "
            "with an error string",
    seen_in="LM Studio 0.3.14 (lmstudio-bug-tracker#618) to 0.4.17 (#2085); #1323")


# A prompt longer than the context, on every door (lmconform.reference.overflow): the refusal each door answers
# with is this stage's value; the flags make a door answer instead of refusing.
CONTEXT_OVERFLOW = Stage("the 400 refusal of a request whose prompt does not fit the context, in its door's error "
                         "shape")


@fault("context-overflow-500", CONTEXT_OVERFLOW, api="http",
       summary="a prompt longer than the context is answered HTTP 500 text/plain, not 400",
       seen_in="servers that let the engine's overflow escape; llama.cpp answers 400 exceed_context_size_error")
def context_overflow_500(refusal: Response) -> Response:
    return PlainTextResponse("Internal Server Error", status_code=500)


@fault("context-overflow-detail", CONTEXT_OVERFLOW, api="http",
       summary='a prompt longer than the context is refused 400 `{"detail": "Prompt too long"}`: no error object, '
               "and words no agent reads as an overflow",
       seen_in="omlx #26 (opencode #8089: opencode stops instead of compacting its history)")
def context_overflow_detail(refusal: Response) -> Response:
    return JSONResponse({"detail": "Prompt too long"}, status_code=400)


CONTEXT_OVERFLOW_AS_TEXT = flag(
    "context-overflow-as-text", api="http",
    summary="a prompt longer than the context is answered HTTP 200, the overflow's error message as the answer's "
            "text (stream and non-stream)",
    seen_in="lemonade #2826, kronk #862")
CONTEXT_OVERFLOW_STREAM_CUT = flag(
    "context-overflow-stream-cut", api="http",
    summary="a streamed request whose prompt is longer than the context gets HTTP 200 and a stream that ends after "
            "its first events, with no error and no end (stream only)",
    seen_in="sglang #12081, mistral.rs #1874; llama-cpp-python cuts opencode's stream so")
